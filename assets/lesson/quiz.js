/* quiz.js — the checkpoint quiz: the lesson's concepts, asked with this
 * run's own numbers, then a few facts of this run, then the teacher's own
 * questions (--quiz FILE).
 *
 * Concept questions (concept: true) ask why: why one softmax row cannot
 * serve two relations (on a row of this run where two heads each give a
 * different key most of their row), why head_dim = d_model / h keeps the
 * cost (this run's cost table), what W_o does, what MQA shares, what the
 * K/V cache saves (this run's bytes), what training showed (the input's
 * training record). Their wrong options are the known misconceptions
 * (more heads = more parameters; the wide head averages the heads' maps;
 * MQA shares the queries), and each explanation says why it is wrong.
 *
 * Fact questions ask what the report states: a head's role, where a head
 * sends one query, what the comparison head did with a row. None asks
 * about a number that could be chance, rests on a difference the page does
 * not show (facts.words.clear_margin), names its answer, or asks about a
 * row with fewer than three keys. The same run always gives the same
 * questions, options and order. On a page of several layers of a model the
 * fact questions are drawn from layers spread over the model (layersFrom),
 * each saying its layer.
 *
 * A question is {kind, concept, at, text, options, proof}: at names what
 * it is about (data-* attributes a test can read), options are
 * {value, text, right, why}, and proof() builds the view that shows the
 * answer (or null). To add a kind, write a function returning such a
 * question (or null when the run has no fact for it) and list it in
 * QUESTION_KINDS. */

/* The roles a question offers besides the right one, in this order. */
const ROLE_CHOICES = ['previous-token', 'self', 'duplicate-token', 'first-token', 'induction', 'mixed'];

const CLEAR_MARGIN = WORDS.clear_margin; /* no answer rests on a smaller gap between two weights */
const MIN_KEYS = 3; /* a row with fewer keys has too few to choose from */

/* A share in percent as report.txt prints it: never at the role rule's
 * threshold when it is not on it (sideText, lesson.js). */
function percent(x) { return `${sideText(100 * x, 0, 100 * WORDS.shown_share)}%`; }

/* ------------------------------------------------------------ concepts */

/* Two heads that send query q to two different keys, each with at least
 * the shown share of its row and a clear margin: [a, b] or null. */
function twoRelations(k, q) {
  const v = facts.variants[k];
  for (let a = 0; a < H; a++) {
    if (!isPatternRole(v.heads[a].role)) continue;
    const ta = topOf(mapRow(k, a, q, 'weights'));
    if (ta.value < WORDS.shown_share + CLEAR_MARGIN || topMargin(k, a, q) < CLEAR_MARGIN) continue;
    for (let b = a + 1; b < H; b++) {
      if (!isPatternRole(v.heads[b].role)) continue;
      const tb = topOf(mapRow(k, b, q, 'weights'));
      if (tb.key !== ta.key && tb.value >= WORDS.shown_share + CLEAR_MARGIN && topMargin(k, b, q) >= CLEAR_MARGIN)
        return [a, b];
    }
  }
  return null;
}

/* "Can one softmax row serve both relations?" on the first row of this run
 * (the run's own query first) where two heads hold two: the comparison
 * head's weights on the two keys show it could not. */
function softmaxQuestion() {
  const k = 0, v = facts.variants[k];
  for (const q of [v.pulls.query, ...v.pulls.rows.keys()]) {
    if (visibleKeys(q) < MIN_KEYS) continue;
    const pair = twoRelations(k, q);
    if (!pair) continue;
    const [a, b] = pair;
    const ka = topOf(mapRow(k, a, q, 'weights')).key, kb = topOf(mapRow(k, b, q, 'weights')).key;
    const wa = weightOn(k, WIDE, q, ka), wb = weightOn(k, WIDE, q, kb);
    const rival = `${RIVAL.the} gives ${tokenName(ka)} ${wa} and ${tokenName(kb)} ${wb}`;
    const how = RIVAL.built_from_heads
      ? `it adds the heads' scores (÷ √${H}) and takes one softmax of the sum`
      : 'it has its own weights and one softmax per row';
    return {
      kind: 'softmax', concept: true, at: { variant: k, query: q },
      text: `For the query ${tokenName(q)}, head ${a} gives ${tokenName(ka)} ${weightOn(k, a, q, ka)} of its row ` +
        `and head ${b} gives ${tokenName(kb)} ${weightOn(k, b, q, kb)} of its row. Could one head's single ` +
        `softmax row, like ${RIVAL.too}, give each of these keys more than half of its attention?`,
      options: [
        { value: 'sums-to-one', text: 'No: its weights add up to 1, so only one key can hold more than half', right: true,
          why: `Right: a softmax row is one distribution: ${rival}. Two relations need two rows, which is what ` +
            'several heads give: each head has its own softmax.' },
        { value: 'averages', text: `Yes: ${RIVAL.the} averages the heads' maps, so it keeps both`, right: false,
          why: `Wrong: it does not average the maps: ${how}, and that row still adds up to 1 (${rival}). ` +
            'An average of two rows would not give both keys more than half either.' },
        { value: 'bigger-scores', text: 'Yes, if both keys get large enough scores', right: false,
          why: 'Wrong: the softmax weighs each score against the others: raising both scores by the same amount ' +
            'leaves their weights as they were, and the row still adds up to 1.' },
        { value: 'neighbours', text: 'Only when the two keys stand next to each other', right: false,
          why: "Wrong: where the keys stand does not matter: any row's weights add up to 1." },
      ],
      proof: () => proofRows(k, q, [a, b, WIDE]),
    };
  }
  return null;
}

/* "Why do h heads of width d_model / h cost what one head of width d_model costs?" */
function headDimQuestion() {
  const k = 0, c = facts.variants[k].cost, d = facts.d_model, hd = facts.head_dim;
  if (H < 2 || c.mha.params !== c.single_head.params || c.mha.mac_total !== c.single_head.mac_total) return null;
  const numbers = `${grouped(c.mha.params)} parameters and ${grouped(c.mha.mac_total)} multiply-adds for both`;
  return {
    kind: 'head_dim', concept: true, at: { variant: k },
    text: `This layer splits d_model = ${d} into ${H} heads of head_dim = ${d} / ${H} = ${hd}. Its cost table ` +
      `gives the ${H} heads as many parameters and multiply-adds as one head of width ${d}. Why?`,
    options: [
      { value: 'slices', right: true,
        text: `Each head works in ${hd} dimensions: the ${H} heads' projections are slices of one ${d} × ${d} matrix`,
        why: `Right: head h's W_q is ${d} × ${hd}; the ${H} of them side by side are one ${d} × ${d} matrix, and the ` +
          `scores cost ${H} × ${hd} = ${d} multiply-adds per pair: ${numbers}.` },
      { value: 'more', right: false, text: `It is not so: more heads need more parameters`,
        why: `Wrong: that would hold if each head had its own ${d} × ${d} projections; with head_dim = ${d} / ${H} ` +
          `each has a ${d} × ${hd} slice: ${numbers}.` },
      { value: 'fewer', right: false, text: 'It is not so: small heads need fewer, so the heads cost less',
        why: `Wrong: each head is ${H} times smaller, but there are ${H} of them: ${numbers}.` },
      { value: 'shared', right: false, text: 'The heads share one set of query and key weights',
        why: `Wrong: nothing is shared in multi-head attention: each head has its own ${hd} columns of W_q, W_k ` +
          'and W_v. The total is the same because the slices add up to one matrix.' },
    ],
    proof: () => costTable(k),
  };
}

/* "What does W_o do?" with this layer's shapes. */
function outputQuestion() {
  const d = facts.d_model, hd = facts.head_dim;
  if (H < 2) return null;
  return {
    kind: 'w_o', concept: true, at: { variant: 0 },
    text: `After the softmax, each of the ${H} heads mixes its values into (${T}, ${hd}); the heads' outputs are ` +
      `put side by side into (${T}, ${d}). What does the output projection W_o (${d} × ${d}) then do?`,
    options: [
      { value: 'mixes', right: true, text: "It mixes the heads' outputs: each output dimension can draw on every head",
        why: `Right: each of the ${d} outputs of a token is a weighted sum of all ${d} concatenated numbers, ` +
          `${hd} from each head, so what one head found can reach every dimension.` },
      { value: 'averages', right: false, text: "It averages the heads' attention maps into one map",
        why: "Wrong: W_o never sees a map: it multiplies the values each head has already mixed with its own map. " +
          `The ${H} maps stay ${H} maps.` },
      { value: 'picks', right: false, text: 'It picks the best head for each token and drops the others',
        why: 'Wrong: a matrix product weighs every head\'s output; it selects nothing (unless training set weights to zero).' },
      { value: 'queries', right: false, text: 'It projects the tokens into the queries before the scores',
        why: 'Wrong: that is W_q, before the scores. W_o comes last, after the softmax and the value mix.' },
    ],
    proof: () => null,
  };
}

/* "What do the heads share under MQA?" */
function shareQuestion() {
  if (H < 2) return null;
  const c = facts.variants[0].cost;
  return {
    kind: 'share', concept: true, at: { variant: 0 },
    text: `Under MQA this layer keeps one K/V head for its ${H} query heads. What do the ${H} heads share?`,
    options: [
      { value: 'kv', right: true, text: 'The keys and the values: each head keeps its own queries',
        why: `Right: W_k and W_v shrink to ${facts.d_model} × ${c.mqa.head_dim} (one K/V head); W_q stays ` +
          `${facts.d_model} × ${facts.d_model}, so each head still asks its own question of the shared keys.` },
      { value: 'queries', right: false, text: 'The queries: one query per token serves every head',
        why: 'Wrong: the queries stay per head. Shared queries and shared keys would give every head the same ' +
          'map: one head, not several. The cache holds keys and values, which is why those are shared.' },
      { value: 'maps', right: false, text: 'The attention maps: every head gets the same map',
        why: "Wrong: each head's own queries meet the shared keys, so the heads' maps still differ." },
      { value: 'w_o', right: false, text: 'Only the output projection W_o',
        why: 'Wrong: every layout has one W_o for all heads; MQA changes the keys and values.' },
    ],
    proof: () => costTable(0),
  };
}

/* "How many bytes of K/V cache per token does MQA keep?" with this run's table. */
function cacheQuestion() {
  const k = 0, c = facts.variants[k].cost;
  if (H < 2) return null;
  const per = r => r.kv_cache_bytes_per_token;
  const formula = r => `2 (K and V) × ${r.n_kv_heads} K/V head${r.n_kv_heads > 1 ? 's' : ''} × ${r.head_dim} × ` +
    `2 bytes = ${grouped(per(r))}`;
  const options = [
    { value: per(c.mqa), text: `${grouped(per(c.mqa))} bytes`, right: true,
      why: `Right: MQA keeps one K/V head for all ${H} heads: ${formula(c.mqa)}, ${H} times less than MHA's ` +
        `${grouped(per(c.mha))}. The queries are not cached: each new token makes its own.` },
    { value: per(c.mha), text: `${grouped(per(c.mha))} bytes`, right: false,
      why: `Wrong: that is MHA's cache, each head with its own K and V: ${formula(c.mha)}.` },
    { value: per(c.mqa) / 2, text: `${grouped(per(c.mqa) / 2)} bytes`, right: false,
      why: 'Wrong: that counts the keys only; the cache keeps the values too.' },
  ];
  if (c.gqa) options.push({ value: per(c.gqa), text: `${grouped(per(c.gqa))} bytes`, right: false,
    why: `Wrong: that is GQA-${c.gqa.n_kv_heads}'s cache: ${formula(c.gqa)}.` });
  return {
    kind: 'cache', concept: true, at: { variant: k },
    text: `With ${H} heads of width ${facts.head_dim}, how many bytes of K/V cache per token (per layer, fp16) ` +
      'does MQA keep?',
    options: options.sort((a, b) => a.value - b.value), proof: () => costTable(k),
  };
}

/* "What did training show?": the input's training record, the held-out
 * losses of the heads and of the one head trained the same way, per seed. */
function trainingQuestion() {
  const t = facts.training;
  if (!t) return null;
  const n = t.seeds.length;
  const heads = t.loss_heads.filter((x, s) => x < t.loss_single[s]).length;
  const single = t.loss_single.filter((x, s) => x < t.loss_heads[s]).length;
  const mean = a => a.reduce((x, y) => x + y, 0) / a.length;
  const losses = `mean held-out loss ${mean(t.loss_heads).toFixed(3)} nats for the ${H} heads, ` +
    `${mean(t.loss_single).toFixed(3)} for ${RIVAL.the}; the heads lower at ${heads} of ${n} seeds, ` +
    `${RIVAL.the} at ${single}`;
  const answer = heads === n ? 'heads' : single === n ? 'single' : heads + single === 0 ? 'same' : 'varied';
  const option = (value, text, wrong) => ({ value, text, right: value === answer,
    why: value === answer ? `Right: ${losses}.` : `Wrong: ${wrong}; ${losses}.` });
  return {
    kind: 'training', concept: true, at: { variant: 0 },
    text: `The ${H} heads and ${RIVAL.the} were trained the same way (${t.steps} steps) at ${n} seeds. ` +
      'Which predicted held-out text better?',
    options: [
      option('heads', `the ${H} heads, at every seed`, `the heads did not win at every seed`),
      option('single', `${RIVAL.the}, at every seed`, `${RIVAL.the} did not win at every seed`),
      option('same', 'neither: their losses were equal', 'the losses differ'),
      option('varied', 'it changed from seed to seed', n === 1 ? 'there was one seed'
        : heads === n ? 'the heads won at every seed' : `${RIVAL.the} won at every seed`),
    ],
    proof: () => null,
  };
}

/* ------------------------------------------------------------ facts of this run */

/* The fact questions' kinds that look for a layer, in QUESTION_KINDS' order. */
const LAYER_KINDS = 4;

/* The variants (layers) where the n-th of them looks, in order: on a page of
 * several layers of a model, all of them from the n-th of LAYER_KINDS
 * points spread over the layers, so the questions come from the whole
 * model; else the first variant only. */
function layersFrom(n) {
  if (!MODEL) return [0];
  const L = facts.variants.length, start = Math.floor(n * L / LAYER_KINDS);
  return [...Array(L).keys()].map(i => (start + i) % L);
}

/* " in layer 5" on a model's page, else nothing. */
function inLayer(k) { return MODEL ? ` in ${layerName(k)}` : ''; }

/* Why role `role` is (or is not) map p's, from the pattern's numbers in the report. */
function roleWhy(k, p, role, right) {
  const f = mapFacts(k, p);
  const who = mapName(p);
  if (right) return `Right: the report says "${f.sentence}"`;
  const pat = f.patterns[role];
  if (pat) {
    const [share, even, shown, rows] = pat;
    if (rows === 0) return `Wrong: no row of ${who} could show this pattern.`;
    return `Wrong: ${who} gives it ${percent(share)} of its attention on average (even spreading would give ` +
      `${percent(even)}), at least ${percent(WORDS.shown_share)} of the row in ${shown} of ${rows} rows: ` +
      `the report's role is ${f.role}.`;
  }
  return `Wrong: ${who} has a pattern with enough support, so the report names its role: ${f.role}.`;
}

/* "What does map p do?" in variant k. */
function roleQuestion(k, p) {
  const f = mapFacts(k, p);
  const choices = [f.role, ...ROLE_CHOICES.filter(r => r !== f.role)].slice(0, 4).sort();
  const v = facts.variants[k];
  const under = MODEL ? inLayer(k) : facts.variants.length > 1 ? ` under ${v.name}` : '';
  return {
    kind: 'role', concept: false, at: { variant: k, map: p },
    text: `What does ${mapName(p)} do${under}? (Look at its map: where are its bright cells?)`,
    options: choices.map(r => ({ value: r, text: `it ${roleWords(r)}`, right: r === f.role, why: roleWhy(k, p, r, r === f.role) })),
    proof: () => proofMap(k, p),
  };
}

function firstRoleQuestion() {
  for (const k of layersFrom(0)) {
    const h = facts.variants[k].heads.findIndex(f => isPatternRole(f.role));
    if (h >= 0) return roleQuestion(k, h);
  }
  return roleQuestion(layersFrom(0)[0], 0);
}

function wideRoleQuestion() { return roleQuestion(layersFrom(3)[0], WIDE); }

/* Map p's top weight less its second in query q's row (the whole top
 * weight when the row has one key). */
function topMargin(k, p, q) {
  const w = mapRow(k, p, q, 'weights').values.slice().sort((a, b) => b - a);
  return w[0] - (w.length > 1 ? w[1] : 0);
}

/* Query q's candidate keys for a "where" question: the heads' top keys,
 * the comparison head's, the one before the query and token 0, four at
 * most with the answer, in token order; never the query itself (its name
 * is in the question). */
function keyChoices(v, q, answer) {
  const row = v.pulls.rows[q];
  const keys = [answer];
  for (const key of [...row.head_top_keys, row.wide_top_key, q - 1, 0, q - 2, 1])
    if (key >= 0 && key < visibleKeys(q) && key !== q && !keys.includes(key) && keys.length < 4) keys.push(key);
  return keys.sort((a, b) => a - b);
}

/* Map p's weight on key j of query q, as text ("0.99", or "less than 0.05"
 * when a summary page does not keep that key). */
function weightOn(k, p, q, j) {
  const row = mapRow(k, p, q, 'weights');
  const n = row.keys.indexOf(j);
  if (n >= 0) return weightText(row.values[n]);
  return `less than ${weightText(Math.min(...row.values))}`;
}

/* "Where does head h send query q?": a head with a role, and a row of at
 * least MIN_KEYS keys with at least the shown share on the head's top key,
 * ahead of the next key by the clear margin, the top key not the query
 * itself nor a token of the same text (the run's own query first). The
 * question does not name the head's role: that would give the answer. */
function whereQuestion() {
  for (const k of layersFrom(1)) {
    const q = whereRow(k);
    if (q) return q;
  }
  return null;
}

function whereRow(k) {
  const v = facts.variants[k];
  const queries = [v.pulls.query, ...v.pulls.rows.keys()];
  for (const q of queries) {
    if (visibleKeys(q) < MIN_KEYS) continue;
    for (let h = 0; h < H; h++) {
      if (!isPatternRole(v.heads[h].role)) continue;
      const top = topOf(mapRow(k, h, q, 'weights'));
      if (top.key !== v.pulls.rows[q].head_top_keys[h] || top.value < WORDS.shown_share) continue;
      if (topMargin(k, h, q) < CLEAR_MARGIN || top.key === q || tokenLabel(top.key) === tokenLabel(q)) continue;
      const answer = top.key;
      return {
        kind: 'where', concept: false, at: { variant: k, map: h, query: q },
        text: `Which key does head ${h}${inLayer(k)} send the query ${tokenName(q)} to?`,
        options: keyChoices(v, q, answer).map(j => ({
          value: j, text: tokenName(j), right: j === answer,
          why: j === answer
            ? `Right: head ${h} gives ${tokenName(j)} ${weightOn(k, h, q, j)} of the row, its top key.`
            : `Wrong: head ${h} gives ${tokenName(j)} only ${weightOn(k, h, q, j)}; its top key is ${tokenName(answer)}.`,
        })),
        proof: () => proofRows(k, q, [h, WIDE]),
      };
    }
  }
  return null;
}

/* A row whose pull question the shown weights decide: every map's top key
 * ahead of its next by the clear margin, and the comparison head's top
 * weight that far from the shown share (more than it is "followed"). */
function clearRow(k, q) {
  for (let p = 0; p <= H; p++) if (topMargin(k, p, q) < CLEAR_MARGIN) return false;
  return Math.abs(topOf(mapRow(k, WIDE, q, 'weights')).value - WORDS.shown_share) >= CLEAR_MARGIN;
}

/* "Will the comparison head's row for q go with head X's pull, head Y's, or
 * split?": the run's own query when the outcome was followed or split
 * there, else the first row where it was; in either case a row of at least
 * MIN_KEYS keys the shown weights decide (clearRow). */
function pullQuestion() {
  for (const k of layersFrom(2)) {
    const q = pullRow(k);
    if (q) return q;
  }
  return null;
}

function pullRow(k) {
  const v = facts.variants[k];
  const telling = q => visibleKeys(q) >= MIN_KEYS && ['followed', 'split'].includes(v.pulls.rows[q].outcome) &&
    clearRow(k, q);
  const q = telling(v.pulls.query) ? v.pulls.query : v.pulls.rows.findIndex((r, i) => telling(i));
  if (q < 0) return null;
  const row = v.pulls.rows[q];
  const groups = new Map(); /* top key -> the heads whose top key it is */
  row.head_top_keys.forEach((key, h) => groups.set(key, [...(groups.get(key) || []), h]));
  const half = percent(WORDS.shown_share);
  const wideTop = `${RIVAL.top} is ${tokenName(row.wide_top_key)} with ${weightText(row.wide_top_weight)}`;
  const options = [...groups.keys()].sort((a, b) => a - b).map(key => {
    const heads = groups.get(key);
    const right = row.outcome === 'followed' && key === row.wide_top_key;
    const who = heads.length > 1 ? `heads ${heads.join(', ')}` : `head ${heads[0]}`;
    const gives = `${RIVAL.the} gives ${tokenName(key)} ${weightOn(k, WIDE, q, key)}`;
    let why;
    if (right) why = `Right: ${gives}, more than ${half} of its row: the same top key as ${who}.`;
    else if (key === row.wide_top_key) why = `Wrong: ${gives}, its top key, but not more than ${half} of the row.`;
    else why = `Wrong: ${gives}; ${wideTop}.`;
    return { value: `followed:${key}`, text: `its top key is ${who}'s, ${tokenName(key)}, with more than ${half}`, right, why };
  });
  const split = row.outcome === 'split';
  options.push({
    value: 'split', text: `no key gets more than ${half} of its row`, right: split,
    why: split ? `Right: ${wideTop}, not more than ${half}: the row blurs.`
      : `Wrong: ${wideTop}, more than ${half} of the row.`,
  });
  const how = capital(RIVAL.built_from_heads ? `${RIVAL.the} adds up the heads' scores (÷ √${H}). `
    : `${RIVAL.the} has its own weights, not the heads'. `);
  return {
    kind: 'pull', concept: false, at: { variant: k, query: q },
    text: `${how}For the query ${tokenName(q)}${inLayer(k)}, where does its row go?`,
    options, proof: () => proofRows(k, q, [...Array(H).keys(), WIDE]),
  };
}

/* The teacher's questions (--quiz FILE), as the file gives them. */
function teacherQuestions() {
  return facts.teacher_questions.map((t, n) => ({
    kind: 'teacher', concept: false, at: { variant: 0, teacher: n },
    text: t.question,
    options: t.options.map((o, m) => ({ value: m, text: o.text, right: m === t.answer, why: o.explanation })),
    proof: () => null,
  }));
}

const QUESTION_KINDS = [softmaxQuestion, headDimQuestion, outputQuestion, shareQuestion, cacheQuestion,
                        trainingQuestion, firstRoleQuestion, whereQuestion, pullQuestion, wideRoleQuestion];

/* ------------------------------------------------------------ proofs */

function proofMap(k, p) {
  const size = Math.min(480, Math.max(240, 8 * T));
  const canvas = el('canvas', { width: size, height: size, role: 'img',
                                'aria-label': `${mapName(p)}'s map: ${mapFacts(k, p).sentence}` });
  drawMap(canvas, k, p, -1);
  return el('div', {}, canvas, el('p', {}, mapFacts(k, p).sentence));
}

function proofRows(k, q, maps) {
  return el('div', {}, rowsView(k, q, maps, 'weights'),
            el('p', {}, `The report: ${facts.variants[k].pulls.rows[q].caption}.`));
}

/* ------------------------------------------------------------ the page */

function buildQuiz() {
  const list = document.getElementById('questions');
  const questions = [...QUESTION_KINDS.map(make => make()).filter(q => q), ...teacherQuestions()];
  questions.forEach((q, n) => list.append(questionView(q, n)));
}

function questionView(q, n) {
  const item = el('li', { 'data-kind': q.kind, 'data-concept': q.concept ? 'true' : 'false',
                          'data-variant': q.at.variant, 'data-map': q.at.map, 'data-query': q.at.query,
                          'data-teacher': q.at.teacher });
  const name = `q${n}`;
  const options = el('ul', { class: 'options' });
  q.options.forEach((o, m) => {
    const id = `${name}-${m}`;
    const why = el('p', { class: 'explanation', id: `${id}-why`, hidden: true }, o.why);
    options.append(el('li', { 'data-value': o.value },
      el('label', { for: id }, el('input', { type: 'radio', name, id, value: o.value }), ` ${o.text}`), why));
  });
  const verdict = el('p', { class: 'verdict', 'aria-live': 'polite' });
  const proof = el('div', { class: 'proof', hidden: true });
  const reveal = el('button', { type: 'button' }, 'Reveal the answer');
  reveal.addEventListener('click', () => {
    const chosen = item.querySelector('input:checked');
    if (!chosen) {
      verdict.textContent = 'Predict first: choose an answer.';
      return;
    }
    const right = q.options.find(o => o.right);
    [...options.children].forEach((li, m) => {
      li.classList.add(q.options[m].right ? 'right' : 'wrong');
      li.querySelector('.explanation').hidden = false;
    });
    const ok = String(right.value) === chosen.value;
    verdict.textContent = `${ok ? 'Right' : 'Not quite'}: the answer is ${right.text}.`;
    const view = q.proof();
    if (view) {
      proof.replaceChildren(el('p', {}, 'The view that shows it:'), view);
      proof.hidden = false;
    }
  });
  /* the list is not numbered (list-style none): the number is printed once, here */
  const legend = el('legend', { class: 'question' }, `${n + 1}. ${q.text}`);
  item.append(el('fieldset', {}, legend, options), reveal, verdict, proof);
  return item;
}
