#!/usr/bin/env python3
"""svg_texts.py FILE.svg... — the texts of each SVG's <text> elements, in
document order, as one JSON object on stdout: {"FILE.svg": ["text", ...]}
(for tests/unit/check_svg.c: an XML parser independent of the writer)."""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
texts = {}
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    texts[path] = ["".join(e.itertext()) for e in root.iter(SVG + "text")]
json.dump(texts, sys.stdout, ensure_ascii=True)
print()
