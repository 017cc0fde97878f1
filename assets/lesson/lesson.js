/* lesson.js — the lesson page of one mhaviz run.
 *
 * Reads what mhaviz embedded in this file (the facts as JSON, the maps as
 * base64: see src/report/lesson_page.h), draws every map on canvas with its
 * token labels, and shows for one query token every head's row beside the
 * comparison head's, with each weight as text. Point at a token (or focus
 * it) to look, click (Enter) to lock, Esc to unlock; P (or the button)
 * shows one map at a time, full screen. A run over several layers of a
 * model (facts.model) opens on the grid of every layer's heads (a cell
 * opens that head in its layer's view) and switches layers with buttons or
 * [ and ]: each entry of facts.variants is then one layer. No library, no
 * network.
 *
 * Every name, token label, role word and threshold comes from the facts
 * (the C side keeps each in one place): this file keeps none of its own.
 * quiz.js follows this file in the same script and uses its functions. */
'use strict';

const facts = JSON.parse(document.getElementById('facts').textContent);
const T = facts.T;
const H = facts.n_heads;
const WIDE = H; /* map index of the comparison head: maps 0 .. H-1 are the heads */
const WORDS = facts.words; /* the comparison head's names, the roles in words, the thresholds */
const RIVAL = WORDS.rival;
const mapsText = document.getElementById('maps-data').textContent.trim();
const mapsBytes = decodeBase64(mapsText);
const mapsView = new DataView(mapsBytes.buffer);
const summary = facts.maps.mode === 'summary';
const MODEL = facts.model || null; /* a run over several layers: the grid's roles and effects; else null */

const MASK = facts.colours.mask;               /* the masked cells' colour, as in the PNGs */
const SCORES_MASK = facts.colours.scores_mask; /* the same in the score maps */
const SCORES_CLIPPED = facts.colours.scores_clipped; /* score cells below the scale's end */
const WEIGHT_COLOURS = hexColours(facts.colours.weights); /* 256 entries, 0 .. 1 */
const SCORE_COLOURS = hexColours(facts.colours.scores);   /* 128 entries, -m .. 0 */

const state = {
  variant: 0,         /* index into facts.variants */
  query: 0,           /* the query token shown */
  locked: false,      /* a click (Enter) locked the query; Esc unlocks */
  values: 'weights',  /* 'weights' or 'scores' */
  shown: new Array(H).fill(true), /* the head toggles */
  presenter: -1,      /* the map presenter mode shows, -1 when it is off */
  grid: 'role',       /* the grid's colours: 'role' or 'effect' (on the prediction) */
  back: null,         /* the element presenter mode gives the focus back to (a grid cell), or null */
};

/* ------------------------------------------------------------ the embedded numbers */

function decodeBase64(text) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text); /* native, where the browser has it */
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/* An IEEE half (float16) as a number. */
function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 31;
  const mant = h & 1023;
  if (exp === 0) return sign * mant * Math.pow(2, -24);
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * Math.pow(2, exp - 15);
}

function hexColours(hex) {
  const out = [];
  for (let i = 0; i < hex.length; i += 6)
    out.push([0, 2, 4].map(k => parseInt(hex.substr(i + k, 2), 16)));
  return out;
}

/* Keys query i may see (mha_visible_keys, in the facts). */
function visibleKeys(i) { return facts.visible_keys[i]; }

const ROW_START = [0]; /* the first visible cell of each query's row, in a full page's map */
for (let i = 0; i < T; i++) ROW_START.push(ROW_START[i] + visibleKeys(i));
const CELLS = ROW_START[T]; /* visible cells of a map */

/* Byte offset of map p of variant k (both layouts: src/lesson_page.c). */
function mapOffset(k, p) {
  const perMap = summary ? facts.maps.thumb * facts.maps.thumb + T * facts.maps.top_k * 6 : CELLS * 4;
  return (k * (H + 1) + p) * perMap;
}

/* Query i's row of map p in variant k: the keys the page holds and their
 * weights or scores (which = 'weights' or 'scores'). Full pages hold every
 * visible key; summary pages the row's top keys, largest weight first. */
function mapRow(k, p, i, which) {
  if (!summary) {
    const n = visibleKeys(i);
    const base = mapOffset(k, p) + (which === 'scores' ? CELLS * 2 : 0) + ROW_START[i] * 2;
    const keys = [], values = [];
    for (let j = 0; j < n; j++) {
      keys.push(j);
      values.push(halfToNumber(mapsView.getUint16(base + 2 * j, true)));
    }
    return { keys, values, complete: true };
  }
  const K = facts.maps.top_k;
  const base = mapOffset(k, p) + facts.maps.thumb * facts.maps.thumb + i * K * 6;
  const keys = [], values = [];
  for (let r = 0; r < K; r++) {
    const key = mapsView.getUint16(base + 2 * r, true);
    if (key === 0xFFFF) break;
    keys.push(key);
    const at = base + (which === 'scores' ? 4 * K : 2 * K) + 2 * r;
    values.push(halfToNumber(mapsView.getUint16(at, true)));
  }
  return { keys, values, complete: keys.length === visibleKeys(i) };
}

/* The largest weight (or score) of a row's keys, the lowest key on ties. */
function topOf(row) {
  let best = 0;
  for (let r = 1; r < row.values.length; r++)
    if (row.values[r] > row.values[best] || (row.values[r] === row.values[best] && row.keys[r] < row.keys[best]))
      best = r;
  return { key: row.keys[best], value: row.values[best] };
}

/* ------------------------------------------------------------ words */

/* Token i as every picture and report.txt show it (token_text in C). */
function tokenLabel(i) { return facts.token_labels[i]; }

function tokenName(i) { return `'${tokenLabel(i)}' (${i})`; }

/* Map p's name in a sentence ("head 2", "the wide head") and as a title. */
function mapName(p) { return p === WIDE ? RIVAL.the : `head ${p}`; }
function mapTitle(p) { return p === WIDE ? RIVAL.title : `head ${p}`; }

/* s with its first letter in capitals, to start a sentence. */
function capital(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

/* What role r means, in the report's words. */
function roleWords(r) { return WORDS.roles[r]; }
function isPatternRole(r) { return WORDS.pattern_roles.includes(r); }

function mapFacts(k, p) {
  const v = facts.variants[k];
  return p === WIDE ? v.wide : v.heads[p];
}

/* x with `decimals` decimals, but never printed as the threshold `at` when
 * it is not at (measures_side_text in the C code): then one more decimal,
 * rounded away from at (0.4998 -> "0.499" against 0.5, 49.96 -> "49.9"
 * against 50). */
function sideText(x, decimals, at) {
  if (!Number.isFinite(x)) return String(x);
  const text = x.toFixed(decimals);
  if (text !== at.toFixed(decimals) || x === at) return text;
  const unit = 10 ** (decimals + 1);
  return ((x < at ? Math.floor(x * unit) : Math.ceil(x * unit)) / unit).toFixed(decimals + 1);
}
/* A weight as the pictures print it (measures_weight_text): two decimals,
 * but never "0.50" for a weight that is not one half, since the report
 * counts a row's half at 0.5 exactly. */
function weightText(x) { return sideText(x, 2, WORDS.shown_share); }
function scoreText(x) { return Number.isFinite(x) ? x.toFixed(1) : String(x); }
function sizeText(bytes) {
  return bytes < 1048576 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1048576).toFixed(1)} MB`;
}
function grouped(n) { return n.toLocaleString('en-US'); }

/* Make an element: el('td', {class: 'x'}, 'text'). Text is always text, never HTML. */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    e.setAttribute(name, value === true ? '' : String(value));
  }
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

/* ------------------------------------------------------------ colours */

/* The colour map's entry for weight w. */
function weightIndex(w) {
  const i = Math.round(255 * Math.min(1, Math.max(0, w)));
  return Number.isFinite(i) ? i : 0;
}

function weightColour(w) { return WEIGHT_COLOURS[weightIndex(w)]; }

/* A score less its row's maximum, as the score PNGs colour it: on the blue
 * half of the diverging map from -m (dark) to 0 (near-white, the row's
 * winner), m the map's scale end from the facts (render_scores_end: at
 * most 10); a score further down is grey (SCORES_CLIPPED). */
function scoreColour(shifted, f) {
  if (f.scores_clipped && shifted < -f.scores_end) return SCORES_CLIPPED;
  const t = (shifted + f.scores_end) / f.scores_end;
  const i = Math.round(127 * Math.min(1, Math.max(0, t)));
  return SCORE_COLOURS[Number.isFinite(i) ? i : 127];
}

/* rgb as one opaque RGBA pixel of a Uint32Array over ImageData (little-endian: R first). */
function rgba(rgb) { return ((255 << 24) | (rgb[2] << 16) | (rgb[1] << 8) | rgb[0]) >>> 0; }

function css(rgb) { return `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`; }

/* Black or white text, whichever reads better on rgb (WCAG contrast). */
function inkOn(rgb) {
  const lin = rgb.map(c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); });
  const L = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000' : '#fff';
}

/* ------------------------------------------------------------ drawing maps */

const mapImages = new Map(); /* "k/p/values" -> a canvas holding the map at one pixel a cell */

/* Map p of variant k as an image, one pixel a cell (a thumbnail pixel in a summary). */
function mapImage(k, p, values) {
  const id = `${k}/${p}/${values}`;
  if (mapImages.has(id)) return mapImages.get(id);
  const size = summary ? facts.maps.thumb : T;
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = size;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(size, size);
  const px = new Uint32Array(img.data.buffer); /* one RGBA pixel a number: fast to fill */
  const weights = WEIGHT_COLOURS.map(rgba);
  if (summary) {
    /* each pixel: the largest weight among its cells (x 254), 255 = all masked */
    const base = mapOffset(k, p), mask = rgba(MASK);
    for (let n = 0; n < size * size; n++) {
      const b = mapsBytes[base + n];
      px[n] = b === 255 ? mask : weights[weightIndex(b / 254)];
    }
  } else {
    const mask = rgba(values === 'scores' ? SCORES_MASK : MASK), f = mapFacts(k, p);
    for (let i = 0; i < T; i++) {
      const row = mapRow(k, p, i, values);
      const top = values === 'scores' ? Math.max(...row.values) : 0;
      for (let j = 0; j < T; j++) {
        if (j >= row.keys.length) px[i * T + j] = mask;
        else px[i * T + j] = values === 'scores' ? rgba(scoreColour(row.values[j] - top, f)) : weights[weightIndex(row.values[j])];
      }
    }
  }
  ctx.putImageData(img, 0, 0);
  mapImages.set(id, canvas);
  return canvas;
}

/* Draw map p of variant k on canvas, with query row i outlined (i < 0: none). */
function drawMap(canvas, k, p, i) {
  const ctx = canvas.getContext('2d');
  ctx.imageSmoothingEnabled = false;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(mapImage(k, p, summary ? 'weights' : state.values), 0, 0, canvas.width, canvas.height);
  if (i >= 0) {
    const y0 = Math.floor(i * canvas.height / T), y1 = Math.max(y0 + 2, Math.floor((i + 1) * canvas.height / T));
    ctx.lineWidth = 3;
    ctx.strokeStyle = '#000';
    ctx.strokeRect(1.5, y0 - 1.5, canvas.width - 3, y1 - y0 + 3);
    ctx.lineWidth = 2;
    ctx.strokeStyle = '#fff';
    ctx.strokeRect(3, y0 - 3, canvas.width - 6, y1 - y0 + 6);
  }
}

/* The token labels C planned for a map of side px (facts.labels: the
 * pictures' one rule), from plans: the largest plan not larger than side
 * (the smallest when none is). */
function labelPlan(plans, side) {
  let best = plans[0];
  for (const p of plans) if (p.side <= side) best = p;
  return best;
}

/* The widest of plan's labels at its line height, in CSS px, at most cap. */
const measureCanvas = document.createElement('canvas');
const labelWidths = new Map(); /* plan -> its widest label, measured once */
function labelsWidth(plan, cap) {
  if (!labelWidths.has(plan)) {
    const ctx = measureCanvas.getContext('2d');
    ctx.font = `${plan.px}px "DejaVu Sans", sans-serif`;
    let w = 0;
    for (const t of plan.shown) w = Math.max(w, ctx.measureText(tokenLabel(t)).width);
    labelWidths.set(plan, w);
  }
  return Math.ceil(Math.min(labelWidths.get(plan), cap));
}

/* A map as the page shows it: the canvas (plan.side CSS px) with its
 * query labels left of the rows and its key labels under the columns,
 * turned to read upwards, as the PNGs have them. Returns {plot, canvas}. */
function labelledMap(plan, cls) {
  const margin = labelsWidth(plan, 7 * plan.px) + 8;
  const plot = el('div', { class: `plot ${cls}`, 'aria-hidden': 'true' });
  plot.style.width = `${margin + plan.side}px`;
  plot.style.height = `${plan.side + margin}px`;
  const canvas = el('canvas', { width: 2 * plan.side, height: 2 * plan.side });
  canvas.style.width = canvas.style.height = `${plan.side}px`;
  canvas.style.left = `${margin}px`;
  plot.append(canvas);
  plan.shown.forEach((t, n) => {
    const row = el('span', { class: 'label row-label', 'data-token': t }, tokenLabel(t));
    row.style.fontSize = row.style.lineHeight = `${plan.px}px`;
    row.style.top = `${plan.at[n] - plan.px / 2}px`;
    row.style.width = `${margin - 6}px`;
    const col = el('span', { class: 'label key-label', 'data-token': t }, tokenLabel(t));
    col.style.fontSize = col.style.lineHeight = `${plan.px}px`;
    col.style.left = `${margin + plan.at[n] - plan.px / 2}px`;
    col.style.top = `${plan.side + 6}px`;
    col.style.maxHeight = `${margin - 6}px`;
    plot.append(row, col);
  });
  return { plot, canvas, margin };
}

/* ------------------------------------------------------------ the page's parts */

function buildHeader() {
  const c = facts;
  document.getElementById('title').textContent = c.title ? `mhaviz lesson: ${c.title}` : 'mhaviz lesson';
  document.title = document.getElementById('title').textContent;
  const kv = [...new Set(facts.variants.map(v => v.name))].join(', ');
  const n = facts.variants.length;
  const layers = MODEL ? `${n} layer${n > 1 ? 's' : ''} (${facts.variants.map(v => v.layer).join(', ')}) · ` : '';
  const rival = RIVAL.built_from_heads
    ? `${RIVAL.the} (one head of width ${c.d_model} built from the heads' projections) for comparison`
    : `${RIVAL.the} for comparison`;
  document.getElementById('shape').textContent =
    `${layers}${T} tokens · d_model ${c.d_model} · ${H} heads of width ${c.head_dim} · ${c.causal ? 'causal' : 'not causal'}` +
    ` · ${kv} · ${rival}`;
  document.getElementById('maps-h').textContent = `Every head's map, and ${RIVAL.the}'s`;
  if (summary) {
    const note = document.getElementById('summary-note');
    note.hidden = false;
    note.textContent = `This run is large, so the page keeps each map as a thumbnail of ${c.maps.thumb} x ` +
      `${c.maps.thumb} pixels (each pixel the largest weight of its cells) and the top ${c.maps.top_k} keys of ` +
      `each row, to stay under its size cap of ${c.maps.cap_bytes / 1048576} MB. Every number is in report.json.`;
  }
  document.getElementById('size-note').textContent =
    `The page embeds ${sizeText(mapsText.length)} of maps (float16${summary ? ' top keys, 8-bit ' +
    'thumbnails' : ''}, base64); its size cap is ${c.maps.cap_bytes / 1048576} MB. Weights are shown to 2 decimals ` +
    `(3 near ${WORDS.shown_share}).`;
}

function buildVariantSwitch() {
  if (facts.variants.length < 2 || MODEL) return;
  const box = document.getElementById('variant-options');
  document.getElementById('variant-switch').hidden = false;
  facts.variants.forEach((v, k) => {
    const input = el('input', { type: 'radio', name: 'variant', value: k, checked: k === 0 });
    input.addEventListener('change', () => { state.variant = k; renderAll(); });
    const bytes = v.cost.input.kv_cache_bytes_per_token;
    const pooled = v.pooled ? ', pooled from MHA, before uptraining' : '';
    box.append(el('label', {}, input, ` ${v.name}${pooled} (K/V cache ${grouped(bytes)} bytes per token)`));
  });
}

function buildControls() {
  for (const input of document.querySelectorAll('input[name=values]'))
    input.addEventListener('change', () => { state.values = input.value; renderAll(); });
  const box = document.getElementById('head-toggles');
  for (let h = 0; h < H; h++) {
    const input = el('input', { type: 'checkbox', checked: true });
    input.addEventListener('change', () => { state.shown[h] = input.checked; layoutMaps(); renderAll(); });
    box.append(el('label', {}, input, ` head ${h}`));
  }
  document.getElementById('presenter-open').addEventListener('click', () => openPresenter(firstShownMap()));
}

/* The query tokens: a toolbar with one tab stop; arrows, Home and End move. */
function buildTokens() {
  const bar = document.getElementById('tokens');
  facts.tokens.forEach((t, i) => {
    const b = el('button', { type: 'button', tabindex: -1, 'aria-pressed': 'false',
                             'aria-label': `query ${i}, ${tokenLabel(i)}` }, tokenLabel(i));
    b.addEventListener('pointerenter', () => preview(i));
    b.addEventListener('focus', () => preview(i));
    b.addEventListener('click', () => toggleLock(i));
    bar.append(b);
  });
  bar.addEventListener('keydown', e => {
    const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1, Home: -T, End: T };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const to = Math.min(T - 1, Math.max(0, state.query + moves[e.key]));
    if (state.locked) lock(to);
    bar.children[to].focus();
  });
}

/* ------------------------------------------------------------ the maps' layout */

const MAP_FRAME = 16;   /* a map's padding and border, both sides */
const MAP_GAP = 10;     /* between maps (#maps' gap) */
const MAP_CAPTION = 48; /* a map's name under it: two lines at most */
const LEGEND = 44;      /* the colour bar under the maps */

/* The maps of the current view, as large as lets every one of them sit
 * above the fold with its labels: for each number of columns, the largest
 * side C planned labels for that fits the width and the height left under
 * the maps' top; the largest of these. */
function layoutMaps() {
  const box = document.getElementById('maps');
  const n = visibleMaps().length;
  const width = box.clientWidth || 800;
  /* a model's page opens on its grid: the maps fit the window from the top of their layer's view */
  const from = MODEL ? document.getElementById('explore').getBoundingClientRect().top : -window.scrollY;
  const height = window.innerHeight - (box.getBoundingClientRect().top - from) - LEGEND;
  const plans = facts.labels.maps;
  let best = null;
  for (let cols = 1; cols <= n; cols++) {
    const rows = Math.ceil(n / cols);
    for (let k = plans.length - 1; k >= 0; k--) {
      const margin = labelsWidth(plans[k], 7 * plans[k].px) + 8;
      const w = plans[k].side + margin + MAP_FRAME, h = plans[k].side + margin + MAP_CAPTION + MAP_FRAME;
      if (cols * w + (cols - 1) * MAP_GAP <= width && rows * h + (rows - 1) * MAP_GAP <= height) {
        if (!best || plans[k].side > best.side) best = plans[k];
        break;
      }
    }
  }
  buildMaps(best || plans[0]);
}

function buildMaps(plan) {
  const box = document.getElementById('maps');
  box.replaceChildren();
  box.dataset.side = plan.side;
  for (let p = 0; p <= H; p++) {
    const { plot, canvas } = labelledMap(plan, 'small');
    const label = el('span', { class: 'map-name' });
    const b = el('button', { type: 'button', class: p === WIDE ? 'map wide' : 'map', 'data-map': p,
                             tabindex: p === 0 ? 0 : -1 }, plot, label);
    canvas.addEventListener('mousemove', e => {
      const r = canvas.getBoundingClientRect();
      preview(Math.min(T - 1, Math.max(0, Math.floor((e.clientY - r.top) / r.height * T))));
    });
    b.addEventListener('click', () => openPresenter(p));
    b.addEventListener('keydown', e => mapKey(e, p));
    box.append(b);
  }
}

/* Arrow keys on a map: left and right move between maps, up and down
 * between queries (keeping a lock on the new query). */
function mapKey(e, p) {
  const buttons = [...document.querySelectorAll('#maps .map:not([hidden])')];
  const at = buttons.findIndex(b => Number(b.dataset.map) === p);
  if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
    e.preventDefault();
    const next = buttons[(at + (e.key === 'ArrowLeft' ? buttons.length - 1 : 1)) % buttons.length];
    buttons.forEach(b => b.setAttribute('tabindex', b === next ? 0 : -1));
    next.focus();
  } else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
    e.preventDefault();
    stepQuery(e.key === 'ArrowUp' ? -1 : 1);
  }
}

/* ------------------------------------------------------------ query, lock, presenter */

function preview(i) {
  if (!state.locked) setQuery(i);
}

function lock(i) {
  state.locked = true;
  setQuery(i);
}

function toggleLock(i) {
  if (state.locked && state.query === i) unlock();
  else lock(i);
}

function unlock() {
  state.locked = false;
  renderQuery();
}

function setQuery(i) {
  state.query = i;
  renderQuery();
}

/* One query up or down (keeping a lock on the new query). */
function stepQuery(by) {
  const to = Math.min(T - 1, Math.max(0, state.query + by));
  if (state.locked) lock(to); else setQuery(to);
}

function firstShownMap() { return visibleMaps()[0]; }

/* Presenter mode: one map at a time over the whole window, with large
 * labels; left and right step through the maps shown, up and down through
 * the queries; Esc or P leaves. */
function openPresenter(p) {
  state.presenter = p;
  const section = document.getElementById('presenter');
  section.hidden = false;
  document.body.classList.add('presenting');
  renderPresenter();
  document.getElementById('presenter-close').focus();
}

function closePresenter() {
  const p = state.presenter;
  state.presenter = -1;
  document.getElementById('presenter').hidden = true;
  document.body.classList.remove('presenting');
  const b = state.back || document.querySelector(`#maps .map[data-map="${p}"]`);
  state.back = null;
  if (b) b.focus();
}

function presenterKey(e) {
  const maps = visibleMaps(), at = maps.indexOf(state.presenter);
  if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
    e.preventDefault();
    state.presenter = maps[(at + (e.key === 'ArrowLeft' ? maps.length - 1 : 1)) % maps.length];
    renderPresenter();
  } else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
    e.preventDefault();
    stepQuery(e.key === 'ArrowUp' ? -1 : 1);
  } else if (e.key === 'Escape' || e.key === 'p' || e.key === 'P') {
    e.preventDefault();
    closePresenter();
  } else if (MODEL && (e.key === '[' || e.key === ']')) {
    e.preventDefault();
    stepLayer(e.key === '[' ? -1 : 1);
  } else if (e.key === 'Tab') { /* the dialog keeps the focus: its one button */
    e.preventDefault();
    document.getElementById('presenter-close').focus();
  }
}

document.addEventListener('keydown', e => {
  if (state.presenter >= 0) {
    presenterKey(e);
    return;
  }
  if (e.key === 'Escape') {
    if (state.locked) unlock();
  } else if (MODEL && (e.key === '[' || e.key === ']') && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    stepLayer(e.key === '[' ? -1 : 1);
  } else if ((e.key === 'p' || e.key === 'P') && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    openPresenter(firstShownMap());
  }
});

/* ------------------------------------------------------------ the layers of a model */

/* Entry k of facts.variants as the page names it: "layer 5". */
function layerName(k) { return `layer ${facts.variants[k].layer}`; }

/* Layer k's heads counted by role: "3 previous-token, 1 induction, 28 mixed". */
function roleCounts(k) {
  const counts = new Map();
  for (const f of facts.variants[k].heads) counts.set(f.role, (counts.get(f.role) || 0) + 1);
  return [...counts].map(([r, n]) => `${n} ${r}`).join(', ');
}

/* The layer switch: previous, one button per layer, next; [ and ] anywhere. */
function buildLayerSwitch() {
  if (!MODEL) return;
  document.getElementById('layer-switch').hidden = false;
  document.getElementById('layer-help').hidden = false;
  document.getElementById('presenter-layers').hidden = false;
  const box = document.getElementById('layer-options');
  facts.variants.forEach((v, k) => {
    const b = el('button', { type: 'button', 'data-layer-index': k, 'aria-pressed': 'false',
                             'aria-label': layerName(k) }, v.layer);
    b.addEventListener('click', () => setLayer(k));
    box.append(b);
  });
  document.getElementById('layer-prev').addEventListener('click', () => stepLayer(-1));
  document.getElementById('layer-next').addEventListener('click', () => stepLayer(1));
}

function stepLayer(by) {
  setLayer(Math.min(facts.variants.length - 1, Math.max(0, state.variant + by)));
}

/* Show layer k (every view follows), and say so to a screen reader. */
function setLayer(k) {
  state.variant = k;
  renderAll();
  document.getElementById('layer-status').textContent =
    `${capital(layerName(k))} (${k + 1} of ${facts.variants.length}): ${roleCounts(k)}.`;
}

/* The switch, the view's heading and the grid's row follow the layer shown. */
function renderLayer() {
  if (!MODEL) return;
  const k = state.variant, n = facts.variants.length;
  for (const b of document.querySelectorAll('#layer-options button'))
    b.setAttribute('aria-pressed', Number(b.dataset.layerIndex) === k ? 'true' : 'false');
  document.getElementById('layer-prev').disabled = k === 0;
  document.getElementById('layer-next').disabled = k === n - 1;
  document.getElementById('explore-h').textContent = `${capital(layerName(k))}: where does each head look from here?`;
  for (const tr of document.querySelectorAll('#grid tbody tr'))
    tr.classList.toggle('current', Number(tr.dataset.layerIndex) === k);
}

/* The grid: one row per layer, one cell per head, the first view. */
function buildGrid() {
  if (!MODEL) return;
  document.getElementById('model').hidden = false;
  const n = facts.variants.length;
  document.getElementById('model-h').textContent = `Every layer's heads: ${n} layer${n > 1 ? 's' : ''} × ${H} heads`;
  const head = el('tr', {}, el('td', {}));
  for (let h = 0; h < H; h++) head.append(el('th', { scope: 'col', 'aria-label': `head ${h}` }, h));
  const body = el('tbody');
  facts.variants.forEach((v, k) => {
    const tr = el('tr', { 'data-layer-index': k }, el('th', { scope: 'row' }, layerName(k)));
    for (let h = 0; h < H; h++) {
      const td = el('td', { role: 'gridcell', tabindex: k === 0 && h === 0 ? 0 : -1, 'data-layer': v.layer, 'data-head': h });
      td.addEventListener('click', () => openHead(k, h, td));
      td.addEventListener('keydown', e => gridKey(e, k, h));
      tr.append(td);
    }
    body.append(tr);
  });
  document.getElementById('grid').replaceChildren(el('thead', {}, head), body);
  if (MODEL.effects) {
    document.getElementById('grid-colour').hidden = false;
    document.getElementById('effect-choice').textContent =
      `its effect on the prediction '${MODEL.effects.top_token}' (the head switched off)`;
    for (const input of document.querySelectorAll('input[name=grid-colour]'))
      input.addEventListener('change', () => { state.grid = input.value; renderGrid(); });
  }
  sizeGrid();
  renderGrid();
}

/* Cells as large as lets the whole grid sit in the window under its
 * heading, 18 to 64 px a side, the letter about half of it. */
function sizeGrid() {
  if (!MODEL) return;
  const grid = document.getElementById('grid');
  const rowHead = grid.querySelector('tbody th').getBoundingClientRect().width + 8;
  const L = facts.variants.length, top = grid.getBoundingClientRect().top + window.scrollY;
  const byWidth = (document.getElementById('model').clientWidth - rowHead) / H - 4;
  const byHeight = (window.innerHeight - top - 60) / (L + 1) - 4;
  const side = Math.floor(Math.max(18, Math.min(64, byWidth, byHeight)));
  for (const td of grid.querySelectorAll('td[role=gridcell]')) {
    td.style.width = td.style.height = `${side}px`;
    td.style.fontSize = `${Math.max(12, Math.round(side * 0.55))}px`;
  }
  grid.dataset.side = side;
}

/* Effect e on the colour scale C sent: -end .. end over its 256 colours. */
function effectColour(e) {
  const colours = hexColours(MODEL.effects.colours), end = MODEL.effects.end;
  const t = end > 0 ? (e / end + 1) / 2 : 0.5;
  return colours[Math.round(255 * Math.min(1, Math.max(0, t)))];
}

/* A head's effect as report.txt prints it: "+0.0123". */
function effectText(e) { return `${e >= 0 ? '+' : '−'}${Math.abs(e).toFixed(4)}`; }

function headWords(k, h) {
  const f = facts.variants[k].heads[h];
  const effect = MODEL.effects ? `; switched off, it changes the log-probability of ` +
    `'${MODEL.effects.top_token}' by ${effectText(MODEL.effects.heads[k][h])}` : '';
  return `${layerName(k)}, head ${h}: ${f.role}${effect}`;
}

function renderGrid() {
  if (!MODEL) return;
  const byEffect = state.grid === 'effect';
  const present = new Set();
  for (const td of document.querySelectorAll('#grid td[role=gridcell]')) {
    const k = Number(td.parentNode.dataset.layerIndex), h = Number(td.dataset.head);
    const role = facts.variants[k].heads[h].role;
    present.add(role);
    const rgb = byEffect ? effectColour(MODEL.effects.heads[k][h]) : MODEL.roles[role].colour;
    td.style.background = css(rgb);
    td.style.color = inkOn(rgb);
    td.textContent = MODEL.roles[role].letter;
    td.setAttribute('aria-label', headWords(k, h));
    td.title = headWords(k, h);
  }
  const box = document.getElementById('grid-legend');
  if (byEffect) {
    const end = MODEL.effects.end;
    const bar = el('canvas', { width: 256, height: 20, role: 'img',
                               'aria-label': `colour scale from ${effectText(-end)} to ${effectText(end)}` });
    const ctx = bar.getContext('2d'), colours = hexColours(MODEL.effects.colours);
    for (let x = 0; x < 256; x++) {
      ctx.fillStyle = css(colours[x]);
      ctx.fillRect(x, 0, 1, 20);
    }
    box.replaceChildren(el('span', {}, effectText(-end)), bar, el('span', {}, effectText(end)),
      el('span', {}, `the change in the log-probability of the top next token '${MODEL.effects.top_token}' ` +
        `when the head's output is switched off: at ${effectText(-end)} the prediction leans on the head most. ` +
        'The letters are the roles.'));
    return;
  }
  /* the roles present, in C's order, each a swatch with its letter */
  box.replaceChildren(...Object.keys(MODEL.roles).filter(r => present.has(r)).map(r => {
    const sw = el('span', { class: 'swatch', 'aria-hidden': 'true' }, MODEL.roles[r].letter);
    sw.style.background = css(MODEL.roles[r].colour);
    sw.style.color = inkOn(MODEL.roles[r].colour);
    return el('span', { title: roleWords(r) }, sw, r);
  }));
}

/* Arrow keys move in the grid, Home and End to a row's ends; Enter or
 * space opens the head. */
function gridKey(e, k, h) {
  const L = facts.variants.length;
  const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0],
                  Home: [0, -H], End: [0, H] };
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    openHead(k, h, e.target);
  } else if (e.key in moves) {
    e.preventDefault();
    const k2 = Math.min(L - 1, Math.max(0, k + moves[e.key][0]));
    const h2 = Math.min(H - 1, Math.max(0, h + moves[e.key][1]));
    const to = document.querySelector(`#grid tr[data-layer-index="${k2}"] td[data-head="${h2}"]`);
    for (const td of document.querySelectorAll('#grid td[tabindex="0"]')) td.setAttribute('tabindex', -1);
    to.setAttribute('tabindex', 0);
    to.focus();
  }
}

/* Head h of layer k: its layer's view, the head in presenter mode (its
 * map, its sentence and the report's numbers); leaving it returns to the
 * grid's cell. */
function openHead(k, h, cell) {
  if (!state.shown[h]) { /* a head toggled off is shown again */
    state.shown[h] = true;
    document.querySelectorAll('#head-toggles input')[h].checked = true;
    layoutMaps();
  }
  setLayer(k);
  document.getElementById('explore').scrollIntoView();
  openPresenter(h);
  state.back = cell;
}

/* ------------------------------------------------------------ rendering */

function visibleMaps() {
  const maps = [];
  for (let h = 0; h < H; h++) if (state.shown[h]) maps.push(h);
  maps.push(WIDE);
  return maps;
}

/* "head 2 · K/V 1 · previous-token" */
function mapLabel(k, p) {
  const f = mapFacts(k, p);
  const kv = p !== WIDE && facts.variants[k].n_kv_heads < H ? ` · K/V ${f.kv_head}` : '';
  return `${mapTitle(p)}${kv} · ${f.role}`;
}

function renderAll() {
  const k = state.variant;
  for (const b of document.querySelectorAll('#maps .map')) {
    const p = Number(b.dataset.map);
    b.hidden = p !== WIDE && !state.shown[p];
    b.querySelector('.map-name').textContent = mapLabel(k, p);
  }
  renderLayer();
  renderLegend();
  renderSentences();
  renderCost();
  renderQuery();
}

function renderQuery() {
  const k = state.variant, i = state.query;
  const buttons = document.getElementById('tokens').children;
  for (let t = 0; t < buttons.length; t++) {
    const b = buttons[t];
    const current = t === i;
    b.classList.toggle('current', current);
    b.setAttribute('aria-pressed', current && state.locked ? 'true' : 'false');
    b.setAttribute('tabindex', current ? 0 : -1);
  }
  for (const b of document.querySelectorAll('#maps .map')) {
    const p = Number(b.dataset.map);
    if (!b.hidden) drawMap(b.querySelector('canvas'), k, p, i);
    b.setAttribute('aria-label', `${mapName(p)}, ${mapFacts(k, p).role}: presenter mode`);
  }
  document.getElementById('query-name').textContent = tokenName(i);
  document.getElementById('lock-state').textContent = state.locked
    ? `Locked on ${tokenName(i)}: Esc unlocks.` : 'Following the pointer or the keyboard focus; click or Enter locks.';
  const box = document.getElementById('rows');
  box.replaceChildren(rowsView(k, i, visibleMaps(), state.values));
  const row = facts.variants[k].pulls.rows[i];
  document.getElementById('caption').textContent = `The report: ${row.caption}.`;
  document.getElementById('readout').textContent = readout(k, i);
  if (state.presenter >= 0) renderPresenter();
}

/* What a screen reader says for query i: each map's top key and weight. */
function readout(k, i) {
  const parts = visibleMaps().map(p => {
    const top = topOf(mapRow(k, p, i, 'weights'));
    return `${mapName(p)}: ${tokenName(top.key)} ${weightText(top.value)}`;
  });
  return `Query ${tokenName(i)}${state.locked ? ', locked' : ''}. ${parts.join('; ')}.`;
}

/* The pull view of query i: one row per map, each key's weight (or score)
 * as text on its colour. Up to 16 keys as columns; past that the keys that
 * are some map's top 3 as columns, a "…" column wherever keys are skipped
 * and a caption saying how many keys are shown and why; or, when those are
 * more than 16, a list of each map's top keys. */
function rowsView(k, i, maps, values) {
  const rows = maps.map(p => ({ p, row: mapRow(k, p, i, values), weights: mapRow(k, p, i, 'weights') }));
  const seen = visibleKeys(i);
  let columns, caption = null;
  if (rows.every(r => r.row.complete) && seen <= 16) {
    columns = rows[0].row.keys.slice();
  } else {
    const keys = new Set();
    for (const r of rows) {
      const order = r.weights.keys.map((key, n) => ({ key, w: r.weights.values[n] })).sort((a, b) => b.w - a.w || a.key - b.key);
      order.slice(0, 3).forEach(x => keys.add(x.key));
    }
    columns = [...keys].sort((a, b) => a - b);
    if (columns.length > 16) return rowsList(k, i, rows, values);
    caption = `${columns.length} of the ${seen} keys it sees are shown: the keys among some map's 3 largest ` +
      `weights. "…" marks the keys left out (in no map's top 3).`;
  }
  /* the table's columns: each key, and a gap {from, to} where keys are left out */
  const cells = [];
  columns.forEach((key, c) => {
    const before = c === 0 ? 0 : columns[c - 1] + 1;
    if (key > before) cells.push({ from: before, to: key - 1 });
    cells.push(key);
  });
  const last = columns.length ? columns[columns.length - 1] : seen - 1;
  if (last < seen - 1) cells.push({ from: last + 1, to: seen - 1 });
  const gapText = g => g.from === g.to ? `key ${g.from} left out` : `keys ${g.from} to ${g.to} left out`;
  const head = el('tr', {}, el('th', { scope: 'col' }, 'map \\ key'));
  for (const c of cells) {
    if (typeof c === 'number') head.append(el('th', { scope: 'col', 'data-key': c }, tokenLabel(c), el('br'), `(${c})`));
    else head.append(el('th', { scope: 'col', class: 'gap', 'data-gap': `${c.from}-${c.to}`, 'aria-label': gapText(c) },
                        '…', el('br'), c.from === c.to ? `(${c.from})` : `(${c.from}–${c.to})`));
  }
  const body = el('tbody');
  for (const r of rows) {
    const f = mapFacts(k, r.p);
    const tr = el('tr', { class: r.p === WIDE ? 'wide' : null, 'data-map': r.p },
                  el('th', { scope: 'row' }, mapName(r.p), el('br'), el('small', {}, f.role)));
    const top = values === 'scores' ? Math.max(...r.row.values) : 0;
    for (const c of cells) {
      if (typeof c !== 'number') {
        tr.append(el('td', { class: 'gap', 'aria-label': gapText(c) }, '…'));
        continue;
      }
      const key = c, n = r.row.keys.indexOf(key);
      if (n < 0) {
        tr.append(el('td', { class: 'missing', 'data-key': key, title: 'not among the keys this page keeps for this row' }, '—'));
        continue;
      }
      const x = r.row.values[n];
      const rgb = values === 'scores' ? scoreColour(x - top, f) : weightColour(x);
      const td = el('td', { 'data-key': key }, values === 'scores' ? scoreText(x) : weightText(x));
      td.style.background = css(rgb);
      td.style.color = inkOn(rgb);
      tr.append(td);
    }
    body.append(tr);
  }
  const what = values === 'scores' ? 'scores' : 'weights';
  const name = `${what} of query ${tokenName(i)}, one row per map`;
  if (!caption) return el('table', { class: 'pull', 'aria-label': name }, el('thead', {}, head), body);
  return el('table', { class: 'pull' }, el('caption', {}, `The ${name}: ${caption}`), el('thead', {}, head), body);
}

function rowsList(k, i, rows, values) {
  const list = el('ul', { class: 'pull', 'aria-label': `top keys of query ${tokenName(i)}` });
  const note = el('p', { class: 'help' }, `Each map's 5 largest of the ${visibleKeys(i)} keys query ` +
    `${tokenName(i)} sees (more than 16 keys are some map's top 3: too many for one table).`);
  for (const r of rows) {
    const order = r.row.keys.map((key, n) => ({ key, x: r.row.values[n] }))
      .sort((a, b) => b.x - a.x || a.key - b.key).slice(0, 5);
    const li = el('li', { 'data-map': r.p }, `${mapName(r.p)} · ${mapFacts(k, r.p).role}: `);
    order.forEach((o, n) => li.append(n ? ' · ' : '',
      el('span', { 'data-key': o.key }, `${tokenName(o.key)} ${values === 'scores' ? scoreText(o.x) : weightText(o.x)}`)));
    list.append(li);
  }
  return el('div', {}, note, list);
}

function renderLegend() {
  const box = document.getElementById('legend');
  const bar = el('canvas', { width: 256, height: 20, role: 'img' });
  const ctx = bar.getContext('2d');
  const scores = state.values === 'scores' && !summary;
  for (let x = 0; x < 256; x++) {
    ctx.fillStyle = css(scores ? SCORE_COLOURS[Math.floor(x / 2)] : WEIGHT_COLOURS[x]);
    ctx.fillRect(x, 0, 1, 20);
  }
  const lo = scores ? '−m' : '0';
  const hi = scores ? '0' : '1';
  bar.setAttribute('aria-label', `colour scale from ${lo} to ${hi}`);
  const swatch = el('span', { class: 'swatch' });
  swatch.style.background = css(SCORES_CLIPPED);
  const ends = [...new Set(visibleMaps().map(p => mapFacts(state.variant, p).scores_end))].join(', ');
  box.replaceChildren(el('span', {}, lo), bar, el('span', {}, hi),
                      ...(scores ? [el('span', {}, `score less its row's top (0: the row's winner; m = ${ends}, ` +
                                                   'as the score PNGs)'), swatch, el('span', {}, 'further below')]
                                 : [el('span', {}, 'softmax weight')]));
}

function renderPresenter() {
  const k = state.variant, p = state.presenter, i = state.query;
  const f = mapFacts(k, p);
  document.getElementById('presenter-h').textContent =
    `${MODEL ? `${layerName(k)} · ` : ''}${mapLabel(k, p)} · query ${tokenName(i)}`;
  const box = document.getElementById('presenter-map');
  /* the window less the title above and the side column (380 px and its gap) beside */
  const room = Math.min(window.innerWidth - 48 - 404, window.innerHeight - 80);
  /* the largest side whose map and labels fit the room */
  let plan = null;
  for (const candidate of [...facts.labels.maps, ...facts.labels.presenter])
    if (candidate.side + labelsWidth(candidate, 7 * candidate.px) + 8 <= room) plan = candidate;
  const { plot, canvas } = labelledMap(plan || facts.labels.maps[0], 'large');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${mapName(p)}'s map, ${T} by ${T}: ${f.sentence}`);
  box.replaceChildren(plot);
  drawMap(canvas, k, p, i);
  for (const label of plot.querySelectorAll(`.row-label[data-token="${i}"]`)) label.classList.add('current');
  document.getElementById('presenter-caption').textContent =
    `${f.sentence} The report on query ${tokenName(i)}: ${facts.variants[k].pulls.rows[i].caption}.`;
}

function renderSentences() {
  const k = state.variant, v = facts.variants[k];
  const list = document.getElementById('sentences');
  list.replaceChildren();
  for (let p = 0; p <= H; p++) {
    const f = mapFacts(k, p);
    const who = p === WIDE
      ? `${RIVAL.the} (${RIVAL.built_from_heads ? "the heads' own projections side by side" : 'its own weights'})`
      : `head ${p}${v.n_kv_heads < H ? ` (K/V head ${f.kv_head})` : ''}`;
    list.append(el('li', {}, el('strong', {}, `${who} · ${f.role}: `), f.sentence));
  }
  if (v.note) list.append(el('li', {}, v.note));
}

/* The layer's steps with their shapes, for this variant. */
function renderArchitecture() {
  const k = state.variant, v = facts.variants[k];
  const d = facts.d_model, hd = facts.head_dim, G = v.n_kv_heads, kv = G * hd;
  const steps = [
    `Input: x, one vector per token: (T, d_model) = (${T}, ${d}).`,
    `Project: q = x W_q (${d}, ${d}) → (${T}, ${d}); k = x W_k and v = x W_v (${d}, ${kv}) → (${T}, ${kv}) each.`,
    `Split into ${H} heads of width ${hd}: q_h (${T}, ${hd}); ${G} K/V head${G > 1 ? 's' : ''} k_g, v_g (${T}, ${hd})` +
      (G < H ? `, each serving ${H / G} query heads (g = h / ${H / G}).` : ', one per head.'),
    `Scores per head: q_h k_gᵀ / √${hd} → (${T}, ${T})${facts.causal ? ', causal mask (query i sees keys 0..i)' : ''}; softmax per row.`,
    `Mix values: att_h v_g → (${T}, ${hd}) per head.`,
    `Concatenate the heads → (${T}, ${d}); output projection W_o (${d}, ${d}) → (${T}, ${d}).`,
    `Parameters: ${grouped(v.cost.input.params)}${facts.has_bias ? ' (with biases)' : ''}.`,
    `For comparison, ${RIVAL.the}: one head of width ${d}, scores (${T}, ${T}) = ` +
      (RIVAL.built_from_heads ? `the sum of the ${H} heads' scores / √${H}.` : 'from its own weights.'),
  ];
  document.getElementById('architecture').replaceChildren(...steps.map(s => el('li', {}, s)));
}

/* The cost table of variant k, the row of its own layout marked. */
function costTable(k) {
  const c = facts.variants[k].cost;
  const rows = [['MHA', c.mha], ['GQA', c.gqa], ['MQA', c.mqa], [RIVAL.panel, c.single_head]];
  const head = el('tr', {}, ...['layout', 'K/V heads', 'parameters', 'multiply-adds', 'K/V cache bytes per token']
    .map(s => el('th', { scope: 'col' }, s)));
  const body = el('tbody');
  for (const [name, r] of rows) {
    if (!r) continue;
    const current = r !== c.single_head && r.n_kv_heads === c.input.n_kv_heads;
    body.append(el('tr', { class: current ? 'current' : null, 'data-layout': name },
      el('th', { scope: 'row' }, `${name}${name === 'GQA' ? '-' + r.n_kv_heads : ''}${current ? ' (this page)' : ''}`),
      el('td', {}, r.n_kv_heads), el('td', {}, grouped(r.params)), el('td', {}, grouped(r.mac_total)),
      el('td', {}, grouped(r.kv_cache_bytes_per_token))));
  }
  return el('table', {}, el('caption', { class: 'sr-only' }, 'cost of each layout'), el('thead', {}, head), body);
}

/* The input's models trained with each number of K/V heads (facts.trained,
 * runs of several variants only): held-out loss beside the K/V cache. */
function trainedTable() {
  const head = el('tr', {}, ...['trained as', 'K/V heads', 'K/V cache bytes per token', 'held-out loss (nats, mean)']
    .map(s => el('th', { scope: 'col' }, s)));
  const body = el('tbody');
  for (const m of facts.trained)
    body.append(el('tr', {}, el('th', { scope: 'row' }, m.name),
      el('td', {}, m.n_kv_heads ? m.n_kv_heads : '1 (wide)'), el('td', {}, grouped(m.kv_cache_bytes_per_token)),
      el('td', {}, m.mean_loss.toFixed(4))));
  return [el('table', {}, el('caption', {}, 'the same model trained with shared keys and values'),
    el('thead', {}, head), body),
    el('p', { class: 'help' }, 'Each trained from the same start on the same data for the same steps. The ' +
      'variants above are not these: they are pooled from MHA, before uptraining.')];
}

function renderCost() {
  renderArchitecture();
  document.getElementById('cost').replaceChildren(costTable(state.variant),
    el('p', { class: 'help' }, 'K/V cache: K and V of every K/V head at 2 bytes (fp16), per token and layer. ' +
      'Masked cells are not computed, so not counted.'), ...(facts.trained ? trainedTable() : []));
}

/* ------------------------------------------------------------ start */

function start() {
  buildHeader();
  buildVariantSwitch();
  buildLayerSwitch();
  buildGrid();
  buildControls();
  buildTokens();
  state.query = facts.variants[0].pulls.query;
  layoutMaps();
  document.getElementById('presenter-close').addEventListener('click', closePresenter);
  let resized = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resized);
    resized = setTimeout(() => { sizeGrid(); layoutMaps(); renderAll(); }, 150);
  });
  renderAll();
  buildQuiz(); /* quiz.js */
  document.body.dataset.drawnMs = String(Math.round(performance.now()));
}

document.addEventListener('DOMContentLoaded', start);
