#!/usr/bin/python3
"""lesson_pages.py: lesson.html in a real browser (Debian's Chromium, headless).

Writes pages with the mhaviz binary for the lesson samples, for their
variants (--kv-heads 4,2,1), for a sentence whose tokens try to break out of
the page, for a 30-token sentence and for a T = 2048, 32-head layer, then
checks each page in Chromium: it loads from file:// with no request and no
console error; hovering and keyboard-focusing a query token shows the
weights report.json holds, for every head and the wide head; past 16 keys
the pull view marks the keys it leaves out and says which it shows; the quiz's right answers are what
report.json says and every option explains itself; a hostile token is text;
the T = 2048 page paints in under 2 s and stays under its size cap; axe-core
finds no accessibility violation. Prints one line per check and a last line
"browser: N passed, M failed"; exits 1 on any failure.

usage: lesson_pages.py --mhaviz BIN --work DIR --axe AXE_JS [--screenshot PNG]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, '..', '..', 'samples')

# A weight is shown to 2 decimals from a float16: off by at most half of
# 0.01, plus the float16's rounding (at most 2^-12 below 1). Near one half,
# where 2 decimals would show "0.50" for a weight that is not one half, it
# is shown to 3 decimals rounded away from it, from a float16 kept on its
# side: off by less than 0.001 + 2^-11.
WEIGHT_TOLERANCE = 0.005 + 2 ** -12
FIRST_PAINT_LIMIT_MS = 2000
HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'">'


class Checks:
    """Counts the checks; each prints one line."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
        return ok


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = '/usr/bin/chromium'
    for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
              '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-extensions',
              '--window-size=1920,1080', '--user-data-dir=' + tempfile.mkdtemp(prefix='lesson-chromium-')):
        opts.add_argument(a)
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
    d = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=opts)
    # The page itself 1920 x 1080, whatever the window's frame takes.
    d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride',
                      {'width': 1920, 'height': 1080, 'deviceScaleFactor': 1, 'mobile': False})
    return d


def run_mhaviz(binary, args, out):
    subprocess.run([binary, '-q', *args, '-o', out], check=True, stderr=subprocess.DEVNULL)
    return out


def hostile_input(work):
    """lesson 1's input with tokens that try to end the script element."""
    with open(os.path.join(SAMPLES, 'lesson1.json')) as f:
        inp = json.load(f)
    inp['tokens'][2] = HOSTILE
    inp['tokens'][3] = '<!--\u2028&amp;'
    path = os.path.join(work, 'hostile.json')
    with open(path, 'w') as f:
        json.dump(inp, f)
    return path


# 30 tokens: past 16 keys the pull view shows only some keys, with gaps.
LONG_SENTENCE = ('Ben and Anna walked to the old bridge by the river because Ben wanted to show Anna the boats '
                 'that sailed under the bridge at night when the lights came')


def long_input(binary, work):
    """mhaviz init's designed layer for a 30-token sentence."""
    path = os.path.join(work, 'long.json')
    with open(path, 'w') as f:
        subprocess.run([binary, 'init', '--tokens', LONG_SENTENCE, '--designed'], check=True, stdout=f)
    return path


def big_input(work):
    """A T = 2048 layer of 32 heads of width 2, random but seeded."""
    rng = np.random.default_rng(2048)
    words = ['the', 'cat', 'sat', 'on', 'mat', 'and', 'John', 'Mary', 'gave', 'book', 'to', 'because']
    d = 64
    m = lambda r, c, s: np.round(rng.normal(0, s, (r, c)), 4).tolist()
    inp = {'title': 'T = 2048, 32 heads (random weights)', 'tokens': [words[i * 7 % 12] for i in range(2048)],
           'd_model': d, 'n_heads': 32, 'n_kv_heads': 32, 'causal': True, 'x': m(2048, d, 1.0),
           'W_q': m(d, d, 3 / d ** .5), 'W_k': m(d, d, 3 / d ** .5), 'W_v': m(d, d, 1 / d ** .5),
           'W_o': m(d, d, 1 / d ** .5)}
    path = os.path.join(work, 'big.json')
    with open(path, 'w') as f:
        json.dump(inp, f)
    return path


# ---------------------------------------------------------------- report.json

class Report:
    """One variant's report.json, its maps as arrays (inline or .npy)."""

    def __init__(self, folder):
        self.folder = folder
        with open(os.path.join(folder, 'report.json')) as f:
            self.r = json.load(f)

    def matrix(self, value):
        if isinstance(value, str):
            return np.load(os.path.join(self.folder, value), mmap_mode='r')
        return np.asarray(value, dtype=np.float64)

    def attention(self, p):
        """Map p: head p, or the wide head for p = n_heads."""
        if p == self.r['n_heads']:
            return self.matrix(self.r['single_head']['attention'])
        return self.matrix(self.r['heads'][p]['attention'])

    def scores(self, p):
        """Map p's scores (report.json has them with --steps)."""
        if p == self.r['n_heads']:
            return self.matrix(self.r['single_head']['scores'])
        return self.matrix(self.r['heads'][p]['scores'])

    def role(self, p):
        return (self.r['single_head'] if p == self.r['n_heads'] else self.r['heads'][p])['role']


def variant_reports(out, page_facts):
    """The report of each variant the page shows, in its order."""
    if len(page_facts['variants']) == 1:
        return [Report(out)]
    return [Report(os.path.join(out, f"kv{v['n_kv_heads']}")) for v in page_facts['variants']]


# The page shows weights to 2 decimals: the quiz asks "where" and "pull"
# questions only about rows whose deciding weights differ by this or more.
CLEAR_MARGIN = 0.01
PATTERN_ROLES = {'previous-token', 'self', 'next-token', 'duplicate-token', 'induction', 'first-token',
                 'last-token', 'fixed-token'}


def page_row(report, p, i):
    """Map p's row for query i as the page holds it: the visible keys, as float16 (from float32)."""
    seen = i + 1 if report.r['causal'] else len(report.r['tokens'])
    return np.asarray(report.attention(p)[i][:seen], dtype=np.float32).astype(np.float16).astype(np.float64)


def top_margin(report, p, i):
    w = np.sort(page_row(report, p, i))[::-1]
    return w[0] - (w[1] if len(w) > 1 else 0.0)


def expected_query(kind, report):
    """The row the quiz asks a "where" or "pull" question about, by the quiz's rule."""
    r, H = report.r, report.r['n_heads']
    rows, first = r['pulls']['rows'], r['pulls']['default_query']
    if kind == 'where':
        for q in [first, *range(len(rows))]:
            if len(page_row(report, 0, q)) < 2:
                continue
            for h in range(H):
                w = page_row(report, h, q)
                top = int(np.argmax(w))  # the lowest key on ties, as the page
                if (r['heads'][h]['role'] in PATTERN_ROLES and top == rows[q]['head_top_keys'][h] and w[top] >= 0.5
                        and top_margin(report, h, q) >= CLEAR_MARGIN):
                    return q, h
        return None

    def clear(q):
        return (rows[q]['outcome'] in ('followed', 'split')
                and all(top_margin(report, p, q) >= CLEAR_MARGIN for p in range(H + 1))
                and abs(page_row(report, H, q).max() - 0.5) >= CLEAR_MARGIN)
    if clear(first):
        return first, None
    return next(((q, None) for q in range(len(rows)) if clear(q)), None)


def expected_answer(kind, at, reports):
    """The quiz's right answer, computed from report.json alone."""
    rep = reports[at.get('variant', 0)].r
    if kind == 'role':
        return reports[at['variant']].role(at['map'])
    if kind == 'where':
        return str(rep['pulls']['rows'][at['query']]['head_top_keys'][at['map']])
    if kind == 'pull':
        row = rep['pulls']['rows'][at['query']]
        return 'split' if row['outcome'] == 'split' else f"followed:{row['wide_top_key']}"
    if kind == 'cache':
        return str(rep['cost']['mqa']['kv_cache_bytes_per_token'])
    if kind in ('macs', 'params'):
        field = 'mac_total' if kind == 'macs' else 'params'
        heads, wide = rep['cost']['mha'][field], rep['cost']['single_head'][field]
        return 'more' if heads > wide else 'fewer' if heads < wide else 'the same'
    raise ValueError(kind)


# ---------------------------------------------------------------- checks

def load(d, page):
    d.get_log('browser')
    d.get_log('performance')
    d.get('file://' + os.path.abspath(page))
    for _ in range(100):
        if d.execute_script('return document.body.dataset.drawnMs'):
            break
        time.sleep(0.05)


def requests_and_errors(d, page):
    url = 'file://' + os.path.abspath(page)
    requests = []
    for entry in d.get_log('performance'):
        msg = json.loads(entry['message'])['message']
        if msg['method'] == 'Network.requestWillBeSent':
            requests.append(msg['params']['request']['url'])
    errors = [e for e in d.get_log('browser') if e['level'] in ('SEVERE', 'WARNING')]
    return [u for u in requests if u != url], errors


def shown_weights(d):
    """The pull view as {map: {key: weight}}: the table's cells, or each map's listed top keys."""
    return d.execute_script("""
      const out = {};
      for (const row of document.querySelectorAll('#rows tbody tr, #rows li[data-map]')) {
        const m = {};
        for (const cell of row.querySelectorAll('[data-key]:not(.missing)'))
          m[cell.dataset.key] = parseFloat(cell.textContent.split(' ').pop());
        out[row.dataset.map] = m;
      }
      return out;""")


def same_side_of_half(shown, weight):
    """The report counts a row's half at 0.5: a shown weight is on the same side of it as the weight (or both at it)."""
    return (shown < 0.5) == (weight < 0.5) and (shown > 0.5) == (weight > 0.5)


def compare_row(shown, report, i, maps):
    """Every shown weight of query i against report.json; returns the worst error (infinite for a weight
    shown on the other side of one half, or at it) and how many cells."""
    worst, cells = 0.0, 0
    for p in maps:
        row = shown.get(str(p))
        if not row:
            return float('inf'), cells
        att = report.attention(p)
        for key, w in row.items():
            want = float(att[i][int(key)])
            worst = max(worst, abs(w - want) if same_side_of_half(w, want) else float('inf'))
            cells += 1
    return worst, cells


def check_hover_and_focus(c, d, name, report, queries):
    H = report.r['n_heads']
    maps = list(range(H + 1))
    tokens = d.find_elements(By.CSS_SELECTOR, '#tokens button')
    worst, cells = 0.0, 0
    for i in queries:
        ActionChains(d).move_to_element(tokens[i]).perform()
        w, n = compare_row(shown_weights(d), report, i, maps)
        worst, cells = max(worst, w), cells + n
    c.check(worst <= WEIGHT_TOLERANCE and cells > 0,
            f'{name}: hovering {len(queries)} query tokens shows report.json\'s weights for all {H} heads and the '
            f'wide head ({cells} cells, largest difference {worst:.4f})')
    # Keyboard only: Tab from the top of the page into the tokens, then arrows.
    d.execute_script("document.querySelector('.skip').focus()")
    for _ in range(40 + H):
        ActionChains(d).send_keys(Keys.TAB).perform()
        if d.execute_script("return document.activeElement.parentElement.id === 'tokens'"):
            break
    at = d.execute_script("return [...document.querySelectorAll('#tokens button')].indexOf(document.activeElement)")
    worst, cells, visible_focus = 0.0, 0, True
    for i in queries:
        key = Keys.ARROW_RIGHT if i > at else Keys.ARROW_LEFT
        for _ in range(abs(i - at)):
            ActionChains(d).send_keys(key).perform()
        at = i
        focused = d.execute_script("return [...document.querySelectorAll('#tokens button')].indexOf(document.activeElement)")
        outline = d.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        visible_focus = visible_focus and outline not in ('none', '')
        w, n = compare_row(shown_weights(d), report, i, maps)
        worst, cells = max(worst, w if focused == i else float('inf')), cells + n
    readout = d.find_element(By.ID, 'readout').text or d.execute_script("return document.getElementById('readout').textContent")
    c.check(worst <= WEIGHT_TOLERANCE and cells > 0 and visible_focus and 'Query' in readout,
            f'{name}: keyboard focus on {len(queries)} query tokens (Tab, arrows) shows the same weights '
            f'({cells} cells, largest difference {worst:.4f}), a visible focus ring and an aria-live readout')


def check_lock(c, d, name):
    tokens = d.find_elements(By.CSS_SELECTOR, '#tokens button')
    query = lambda: d.execute_script("return document.getElementById('query-name').textContent")
    tokens[1].click()
    locked = query()
    ActionChains(d).move_to_element(tokens[3]).perform()
    stays = query() == locked and tokens[1].get_attribute('aria-pressed') == 'true'
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    ActionChains(d).move_to_element(tokens[4]).move_to_element(tokens[3]).perform()
    follows = query() != locked and tokens[1].get_attribute('aria-pressed') == 'false'
    c.check(stays and follows, f'{name}: a click locks the query (hover elsewhere keeps it), Esc unlocks')


def check_switches(c, d, name, report):
    """Scores instead of weights, and a head switched off."""
    H = report.r['n_heads']
    d.find_element(By.CSS_SELECTOR, 'input[name=values][value=scores]').click()
    tokens = d.find_elements(By.CSS_SELECTOR, '#tokens button')
    worst, cells = 0.0, 0
    for i in range(len(report.r['tokens'])):
        ActionChains(d).move_to_element(tokens[i]).perform()
        for p, row in shown_weights(d).items():
            for key, x in row.items():
                s = float(report.scores(int(p))[i][int(key)])
                # shown to 1 decimal, from a float16 (relative error 2^-11)
                worst = max(worst, abs(x - s) / (0.05 + abs(s) * 2 ** -11))
                cells += 1
    c.check(0 < cells and worst <= 1.0, f'{name}: the scores switch shows report.json\'s scores ({cells} cells, '
                                        f'largest difference {worst:.2f} of what the display allows)')
    d.find_element(By.CSS_SELECTOR, 'input[name=values][value=weights]').click()
    d.find_elements(By.CSS_SELECTOR, '#head-toggles input')[1].click()
    rows = shown_weights(d)
    map_hidden = d.execute_script("return document.querySelector('#maps .map[data-map=\"1\"]').hidden")
    d.find_elements(By.CSS_SELECTOR, '#head-toggles input')[1].click()
    back = shown_weights(d)
    c.check('1' not in rows and len(rows) == H and map_hidden and len(back) == H + 1,
            f'{name}: switching head 1 off hides its map and its row; on again shows them')


def check_quiz(c, d, name, reports):
    items = d.find_elements(By.CSS_SELECTOR, '#questions > li')
    wrong, unexplained = [], 0
    for n, item in enumerate(items):
        kind = item.get_attribute('data-kind')
        at = {k: int(item.get_attribute('data-' + k)) for k in ('variant', 'map', 'query')
              if item.get_attribute('data-' + k) not in (None, '')}
        hidden_before = all(not e.is_displayed() for e in item.find_elements(By.CSS_SELECTOR, '.explanation'))
        options = item.find_elements(By.CSS_SELECTOR, 'input[type=radio]')
        d.execute_script('arguments[0].scrollIntoView({block: "center"})', item)
        options[-1].click()  # predict (the last option), then reveal
        item.find_element(By.TAG_NAME, 'button').click()
        right = [li.get_attribute('data-value') for li in item.find_elements(By.CSS_SELECTOR, '.options li.right')]
        expected = expected_answer(kind, at, reports)
        if right != [expected]:
            wrong.append(f'question {n + 1} ({kind}): page {right}, report.json {expected}')
        if kind in ('where', 'pull'):
            row = expected_query(kind, reports[at.get('variant', 0)])
            asked = (at.get('query'), at.get('map') if kind == 'where' else None)
            if row != asked:
                wrong.append(f'question {n + 1} ({kind}): asks about (query, head) {asked}, the rule (no near tie) '
                             f'gives {row}')
        for opt in options:
            opt.click()
            why = item.find_element(By.ID, opt.get_attribute('id') + '-why')
            if not hidden_before or not why.is_displayed() or len(why.text) < 10:
                unexplained += 1
        if not item.find_element(By.CSS_SELECTOR, '.proof').is_displayed():
            unexplained += 1
    kinds = sorted({i.get_attribute('data-kind') for i in items})
    c.check(len(items) >= 5 and not wrong,
            f'{name}: {len(items)} quiz questions ({", ".join(kinds)}), every right answer as report.json says, '
            f'no "where" or "pull" question on a row decided by less than {CLEAR_MARGIN}'
            + (': ' + '; '.join(wrong) if wrong else ''))
    c.check(unexplained == 0, f'{name}: every option of every question shows its explanation after the reveal, '
                              f'and the reveal shows its proof ({unexplained} missing)')


def check_gaps(c, d, name, report):
    """Past 16 keys, the pull view's table marks every run of left-out keys
    with a "…" column and says in its caption how many keys it shows and why."""
    tokens = d.find_elements(By.CSS_SELECTOR, '#tokens button')
    T = len(report.r['tokens'])
    H = report.r['n_heads']
    bad, tables = [], 0
    for i in range(T):
        seen = i + 1 if report.r['causal'] else T
        if seen <= 16:
            continue
        ActionChains(d).move_to_element(tokens[i]).perform()
        table = d.execute_script("""const t = document.querySelector('#rows table.pull');
          if (!t) return null;
          return {caption: t.caption ? t.caption.textContent : '', captionShown: !!t.caption && t.caption.offsetHeight > 0,
                  head: [...t.querySelectorAll('thead th[data-key], thead th[data-gap]')].map(th =>
                    th.dataset.key !== undefined ? ['key', +th.dataset.key] : ['gap', th.dataset.gap]),
                  rowGaps: [...t.querySelectorAll('tbody tr')].map(tr => tr.querySelectorAll('td.gap').length)}""")
        if table is None:
            continue  # more than 16 keys are some map's top 3: the list view
        tables += 1
        keys = [x for kind, x in table['head'] if kind == 'key']
        gaps = [x for kind, x in table['head'] if kind == 'gap']
        # Walk the columns: keys and gaps must cover 0 .. seen-1 in order, each gap a run of left-out keys.
        at, ok = 0, True
        for kind, x in table['head']:
            if kind == 'key':
                ok = ok and x == at
                at = x + 1
            else:
                lo, hi = map(int, x.split('-'))
                ok = ok and lo == at and hi >= lo
                at = hi + 1
        ok = ok and at == seen and all(n == len(gaps) for n in table['rowGaps'])
        # Every map's top key (report.json) is a column.
        tops = {int(np.argmax(report.attention(p)[i][:seen])) for p in range(H + 1)}
        ok = ok and tops <= set(keys)
        ok = ok and table['captionShown'] and f'{len(keys)} of the {seen} keys' in table['caption'] \
            and "top 3" in table['caption'] and '…' in table['caption']
        if not ok:
            bad.append(f'query {i}: {table}')
    c.check(tables > 0 and not bad,
            f'{name}: past 16 keys ({tables} queries), the pull view marks each run of left-out keys with a "…" '
            f'column and its caption says how many keys it shows and the rule' + (': ' + '; '.join(bad[:2]) if bad else ''))


def check_side_text(c, d, name):
    """The page's numbers near a threshold print as report.txt prints them (measures_side_text)."""
    got = d.execute_script("return [weightText(0.49992), weightText(0.5), weightText(0.50031), weightText(0.73), "
                           "percent(0.4993), percent(0.5), percent(0.73)]")
    want = ['0.499', '0.50', '0.501', '0.73', '49.9%', '50%', '73%']
    c.check(got == want, f'{name}: weights and shares near one half keep their side of it: {got}')


def check_axe(c, d, name, axe_source):
    d.execute_script(axe_source)
    # Reveal one question first, so its explanations and proof are scanned too.
    d.execute_script("""const q = document.querySelector('#questions > li');
                        q.querySelector('input').click(); q.querySelector('button').click();""")
    result = d.execute_async_script("""const done = arguments[arguments.length - 1];
      axe.run(document).then(r => done(r.violations.map(v => v.id + ' (' + v.nodes.length + ')'))).catch(e => done(['error: ' + e]));""")
    c.check(not result, f'{name}: axe-core finds no accessibility violation' + (': ' + ', '.join(result) if result else ''))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mhaviz', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--axe', required=True)
    ap.add_argument('--screenshot')
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    with open(a.axe) as f:
        axe_source = f.read()
    c = Checks()

    samples = os.path.join(SAMPLES, '{}.json')
    pages = {
        'lesson1': run_mhaviz(a.mhaviz, ['--steps', samples.format('lesson1')], os.path.join(a.work, 'lesson1')),
        'lesson3': run_mhaviz(a.mhaviz, [samples.format('lesson3_mqa')], os.path.join(a.work, 'lesson3')),
        'lessons 1-3': run_mhaviz(a.mhaviz, ['--kv-heads', '4,2,1', samples.format('lesson1')],
                                  os.path.join(a.work, 'variants')),
        'random': run_mhaviz(a.mhaviz, [samples.format('random_init')], os.path.join(a.work, 'random')),
        'long sentence': run_mhaviz(a.mhaviz, [long_input(a.mhaviz, a.work)], os.path.join(a.work, 'long')),
    }
    hostile = run_mhaviz(a.mhaviz, [hostile_input(a.work)], os.path.join(a.work, 'hostile'))
    big = run_mhaviz(a.mhaviz, ['--max-memory', '4096', big_input(a.work)], os.path.join(a.work, 'big'))
    no_html = run_mhaviz(a.mhaviz, ['--no-html', samples.format('lesson1')], os.path.join(a.work, 'no_html'))
    c.check(not os.path.exists(os.path.join(no_html, 'lesson.html')) and
            os.path.exists(os.path.join(no_html, 'report.json')), '--no-html: no lesson.html, the rest written')

    d = browser()
    try:
        for name, out in pages.items():
            page = os.path.join(out, 'lesson.html')
            load(d, page)
            others, errors = requests_and_errors(d, page)
            c.check(not others and not errors, f'{name}: loads from file:// with no other request '
                    f'({len(others)}) and no console error ({len(errors)})' + (f': {others[:3]} {errors[:3]}' if others or errors else ''))
            facts = d.execute_script("return JSON.parse(document.getElementById('facts').textContent)")
            reports = variant_reports(out, facts)
            T = facts['T']
            check_hover_and_focus(c, d, name, reports[0], list(range(T)))
            check_lock(c, d, name)
            if name == 'lesson1':
                check_switches(c, d, name, reports[0])
                check_side_text(c, d, name)
            if name == 'long sentence':
                check_gaps(c, d, name, reports[0])
            if name == 'lesson1' and a.screenshot:
                d.execute_script('document.activeElement.blur(); window.scrollTo(0, 0)')
                ActionChains(d).move_to_element(d.find_elements(By.CSS_SELECTOR, '#tokens button')[6]).perform()
                d.save_screenshot(a.screenshot)
            check_quiz(c, d, name, reports)
            load(d, page)
            check_axe(c, d, name, axe_source)

        page = os.path.join(hostile, 'lesson.html')
        load(d, page)
        shown = d.execute_script("return [...document.querySelectorAll('#tokens button')].map(b => b.textContent)")
        imgs = d.execute_script("return document.querySelectorAll('img').length")
        with open(page, encoding='utf-8') as f:
            raw = f.read()
        c.check(shown[2] == HOSTILE and imgs == 0 and d.title != 'pwned' and '</script><img' not in raw
                and '\u2028' not in raw,
                'a token "</script><img src=x onerror=...>" is shown as text, runs nothing, and the page escapes '
                '<, >, &, U+2028 in its JSON')

        page = os.path.join(big, 'lesson.html')
        size = os.path.getsize(page)
        load(d, page)
        others, errors = requests_and_errors(d, page)
        paint = d.execute_script("""const p = performance.getEntriesByName('first-contentful-paint')[0];
                                    return p ? p.startTime : null""")
        drawn = int(d.execute_script('return document.body.dataset.drawnMs'))
        facts = d.execute_script("return JSON.parse(document.getElementById('facts').textContent)")
        cap = facts['maps']['cap_bytes']
        c.check(paint is not None and paint < FIRST_PAINT_LIMIT_MS and drawn < FIRST_PAINT_LIMIT_MS and not others
                and not errors,
                f'T = 2048, 32 heads: first paint {paint:.0f} ms, every map drawn at {drawn} ms, both under '
                f'{FIRST_PAINT_LIMIT_MS} ms; no request, no console error')
        c.check(size <= cap and facts['maps']['mode'] == 'summary',
                f'T = 2048, 32 heads: the page is {size / 2 ** 20:.1f} MB, under its cap of {cap / 2 ** 20:.0f} MB '
                f'(thumbnails of {facts["maps"]["thumb"]} px, the top {facts["maps"]["top_k"]} keys of each row)')
        report = Report(big)
        tokens = d.find_elements(By.CSS_SELECTOR, '#tokens button')
        worst, cells = 0.0, 0
        for i in (0, 1, 700, 2047):
            d.execute_script('arguments[0].scrollIntoView({block: "center"})', tokens[i])
            ActionChains(d).move_to_element(tokens[i]).perform()
            w, n = compare_row(shown_weights(d), report, i, range(33))
            worst, cells = max(worst, w), cells + n
        c.check(worst <= WEIGHT_TOLERANCE and cells > 0,
                f'T = 2048, 32 heads: hovering 4 query tokens shows each map\'s top keys with report.json\'s '
                f'weights ({cells} keys, largest difference {worst:.4f})')
    except WebDriverException as e:
        c.check(False, f'the browser failed: {e.msg}')
    finally:
        d.quit()
    print(f'browser: {c.passed} passed, {c.failed} failed')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
