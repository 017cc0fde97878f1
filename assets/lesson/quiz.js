/* quiz.js — the checkpoint quiz, made from this run's own numbers.
 *
 * Every question asks about a fact the report states: a head's role, where
 * a head with a role sends one query, what the wide head did with a row
 * (followed some heads' pull, or split), and the cost table. None asks
 * about a number that could be chance: a "where" question needs a head with
 * a role and at least half of the row on its top key. Nor does an answer
 * hinge on a difference the page does not show: weights are shown to 2
 * decimals (3 next to one half), so a "where" or "pull" question skips a row whose top key wins
 * by less than 0.01 (a near tie, decided only by the lowest-index rule), or
 * whose wide head is within 0.01 of half its row. The same run always gives
 * the same questions, options and order.
 *
 * A question is {kind, at, text, options, proof}: at names what it is
 * about (data-* attributes a test can read), options are
 * {value, text, right, why}, and proof() builds the view that shows the
 * answer. To add a kind, write a function returning such a question (or
 * null when the run has no fact for it) and list it in QUESTION_KINDS. */

/* What each role means, in the report's words. */
const ROLE_WORDS = {
  'previous-token': 'looks at the previous token',
  'self': 'looks at its own token',
  'next-token': 'looks at the next token',
  'duplicate-token': 'looks at earlier copies of its token',
  'induction': 'looks at the token after an earlier copy of its token (induction)',
  'first-token': 'looks at the first token',
  'last-token': 'looks at the last token',
  'fixed-token': 'looks at one fixed token from most rows',
  'split': 'splits its rows between two relations',
  'diffuse': 'spreads its attention almost evenly (no role)',
  'mixed': 'has no clear role (mixed)',
  'none': 'has nothing to choose (one token)',
};

/* The roles a question offers besides the right one, in this order. */
const ROLE_CHOICES = ['previous-token', 'self', 'duplicate-token', 'first-token', 'induction', 'mixed'];

function isPatternRole(role) { return role in (facts.variants[0].heads[0].patterns || {}); }

/* A share in percent as report.txt prints it: never "50%" for a share under
 * or over the role rule's half (sideText, lesson.js). */
function percent(x) { return `${sideText(100 * x, 0, 50)}%`; }

/* Why role `role` is (or is not) map p's, from the pattern's numbers in the report. */
function roleWhy(k, p, role, right) {
  const f = mapFacts(k, p);
  const who = mapName(p);
  if (right) return `Right: the report says "${f.sentence}"`;
  const pat = f.patterns[role];
  if (pat) {
    const [share, even, shown, rows] = pat;
    if (rows === 0) return `Wrong: no row of ${who} could show this pattern.`;
    return `Wrong: ${percent(share)} of ${who}'s attention goes there on average (even spreading would give ` +
      `${percent(even)}), at least half of the row in ${shown} of ${rows} rows: the report's role is ${f.role}.`;
  }
  return `Wrong: ${who} has a pattern with enough support, so the report names its role: ${f.role}.`;
}

/* "What does head p do?" in variant k. */
function roleQuestion(k, p) {
  const f = mapFacts(k, p);
  const choices = [f.role, ...ROLE_CHOICES.filter(r => r !== f.role)].slice(0, 4).sort();
  const v = facts.variants[k];
  const under = facts.variants.length > 1 ? ` under ${v.name}` : '';
  return {
    kind: 'role', at: { variant: k, map: p },
    text: `What does ${mapName(p)} do${under}? (Look at its map: where are its bright cells?)`,
    options: choices.map(r => ({ value: r, text: `it ${ROLE_WORDS[r]}`, right: r === f.role, why: roleWhy(k, p, r, r === f.role) })),
    proof: () => proofMap(k, p),
  };
}

/* The first head with a pattern for a role, or -1. */
function firstRoleHead(k) {
  return facts.variants[k].heads.findIndex(f => isPatternRole(f.role));
}

function firstRoleQuestion() {
  const h = firstRoleHead(0);
  return roleQuestion(0, h >= 0 ? h : 0);
}

function wideRoleQuestion() { return roleQuestion(0, WIDE); }

/* Under the last variant (MQA, with --kv-heads), the role of the first head
 * whose role changed, else of the first head with a role. */
function variantRoleQuestion() {
  const last = facts.variants.length - 1;
  if (last === 0) return null;
  const heads = facts.variants[0].heads;
  let h = heads.findIndex((f, x) => f.role !== facts.variants[last].heads[x].role);
  if (h < 0) h = Math.max(0, firstRoleHead(0));
  const q = roleQuestion(last, h);
  q.text = `Under ${facts.variants[last].name}, the heads share their keys and values. Head ${h} is ` +
    `${heads[h].role} under ${facts.variants[0].name}: what does it do under ${facts.variants[last].name}?`;
  return q;
}

/* Weights are shown to 2 decimals (3 next to one half): no right answer, and no explanation,
 * rests on a difference smaller than this. */
const CLEAR_MARGIN = 0.01;

/* Map p's top weight less its second in query q's row (the whole top
 * weight when the row has one key). */
function topMargin(k, p, q) {
  const w = mapRow(k, p, q, 'weights').values.slice().sort((a, b) => b - a);
  return w[0] - (w.length > 1 ? w[1] : 0);
}

/* Query q's candidate keys for a "where" question: the heads' top keys, the
 * wide head's, the query itself, the one before and token 0, four at most
 * with the answer, in token order. */
function keyChoices(v, q, answer) {
  const row = v.pulls.rows[q];
  const keys = [answer];
  for (const key of [...row.head_top_keys, row.wide_top_key, q, q - 1, 0])
    if (key >= 0 && key < visibleKeys(q) && !keys.includes(key) && keys.length < 4) keys.push(key);
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

/* "Where does head h send query q?": a head with a role, and a row with at
 * least half of it on the head's top key, ahead of the next key by 0.01 or
 * more (the run's own query first). */
function whereQuestion() {
  const k = 0, v = facts.variants[k];
  const queries = [v.pulls.query, ...v.pulls.rows.keys()];
  for (const q of queries) {
    if (visibleKeys(q) < 2) continue;
    for (let h = 0; h < H; h++) {
      if (!isPatternRole(v.heads[h].role)) continue;
      const top = topOf(mapRow(k, h, q, 'weights'));
      if (top.key !== v.pulls.rows[q].head_top_keys[h] || top.value < 0.5) continue;
      if (topMargin(k, h, q) < CLEAR_MARGIN) continue;
      const answer = top.key;
      return {
        kind: 'where', at: { variant: k, map: h, query: q },
        text: `Head ${h} is ${v.heads[h].role}. Which key does head ${h} send the query ${tokenName(q)} to?`,
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
 * ahead of its next by 0.01 or more, and the wide head's top weight 0.01 or
 * more away from half its row (more than half is "followed"). */
function clearRow(k, q) {
  for (let p = 0; p <= H; p++) if (topMargin(k, p, q) < CLEAR_MARGIN) return false;
  return Math.abs(topOf(mapRow(k, WIDE, q, 'weights')).value - 0.5) >= CLEAR_MARGIN;
}

/* "Will the wide head's row for q follow head X's pull, head Y's, or
 * split?": the run's own query when the wide head followed or split there,
 * else the first row where it did; in either case, a row the shown weights
 * decide (clearRow: a near tie is not taught as a winner). */
function pullQuestion() {
  const k = 0, v = facts.variants[k];
  const telling = q => ['followed', 'split'].includes(v.pulls.rows[q].outcome) && clearRow(k, q);
  const q = telling(v.pulls.query) ? v.pulls.query : v.pulls.rows.findIndex((r, i) => telling(i));
  if (q < 0) return null;
  const row = v.pulls.rows[q];
  const groups = new Map(); /* top key -> the heads whose top key it is */
  row.head_top_keys.forEach((key, h) => groups.set(key, [...(groups.get(key) || []), h]));
  const wideTop = `the wide head's top key is ${tokenName(row.wide_top_key)} with ${weightText(row.wide_top_weight)}`;
  const options = [...groups.keys()].sort((a, b) => a - b).map(key => {
    const heads = groups.get(key);
    const right = row.outcome === 'followed' && key === row.wide_top_key;
    const who = heads.length > 1 ? `heads ${heads.join(', ')}` : `head ${heads[0]}`;
    const gives = `the wide head gives ${tokenName(key)} ${weightOn(k, WIDE, q, key)}`;
    let why;
    if (right) why = `Right: ${gives}, more than half of the row: it followed ${who}; the other pulls are lost.`;
    else if (key === row.wide_top_key) why = `Wrong: ${gives}, its top key, but not more than half of the row: it did not follow ${who}.`;
    else why = `Wrong: ${gives}; ${wideTop}.`;
    return { value: `followed:${key}`, text: `it follows ${who} to ${tokenName(key)}`, right, why };
  });
  const split = row.outcome === 'split';
  options.push({
    value: 'split', text: 'the pulls split: no key gets more than half of its row', right: split,
    why: split ? `Right: ${wideTop}, not more than half: the pulls split and the row blurs.`
      : `Wrong: ${wideTop}, more than half of the row.`,
  });
  return {
    kind: 'pull', at: { variant: k, query: q },
    text: `The wide head adds up the heads' scores. For the query ${tokenName(q)}, ` +
      `will it follow one head's pull, or split?`,
    options, proof: () => proofRows(k, q, [...Array(H).keys(), WIDE]),
  };
}

/* "How many bytes of K/V cache per token does MQA keep here?" */
function cacheQuestion() {
  const k = 0, c = facts.variants[k].cost;
  if (H < 2) return null;
  const per = r => r.kv_cache_bytes_per_token;
  const formula = r => `2 (K and V) × ${r.n_kv_heads} K/V head${r.n_kv_heads > 1 ? 's' : ''} × ${r.head_dim} × 2 bytes = ${grouped(per(r))}`;
  const options = [
    { value: per(c.mqa), text: `${grouped(per(c.mqa))} bytes`, right: true,
      why: `Right: MQA keeps one K/V head for all ${H} heads: ${formula(c.mqa)}.` },
    { value: per(c.mha), text: `${grouped(per(c.mha))} bytes`, right: false,
      why: `Wrong: that is MHA's cache, each head with its own K and V: ${formula(c.mha)}.` },
    { value: per(c.mqa) / 2, text: `${grouped(per(c.mqa) / 2)} bytes`, right: false,
      why: 'Wrong: that counts the keys only; the cache keeps the values too.' },
  ];
  if (c.gqa) options.push({ value: per(c.gqa), text: `${grouped(per(c.gqa))} bytes`, right: false,
    why: `Wrong: that is GQA-${c.gqa.n_kv_heads}'s cache: ${formula(c.gqa)}.` });
  return {
    kind: 'cache', at: { variant: k },
    text: `With ${H} heads of width ${facts.head_dim}, how many bytes of K/V cache per token (per layer, fp16) ` +
      `does MQA keep?`,
    options: options.sort((a, b) => a.value - b.value), proof: () => costTable(k),
  };
}

/* "Do h heads need more <noun> than one wide head?": field of the cost
 * table's MHA row against the wide head's row. */
function costQuestion(kind, field, noun) {
  const k = 0, c = facts.variants[k].cost;
  const heads = c.mha[field], wide = c.single_head[field];
  const answer = heads > wide ? 'more' : heads < wide ? 'fewer' : 'the same';
  const numbers = `${H} heads: ${grouped(heads)} ${noun}; the wide head: ${grouped(wide)}`;
  const lesson = answer === 'the same' ? ` Each head works in its own ${facts.head_dim} dimensions: the ${H} heads ` +
    `together are the size of one head of width ${facts.d_model}.` : '';
  return {
    kind, at: { variant: k },
    text: `Compared with one wide head of width ${facts.d_model}, how many ${noun} do the ${H} heads of ` +
      `width ${facts.head_dim} need?`,
    options: ['fewer', 'the same', 'more'].map(o => ({
      value: o, text: o, right: o === answer,
      why: `${o === answer ? 'Right' : 'Wrong'}: ${numbers}.${o === answer ? lesson : ''}`,
    })),
    proof: () => costTable(k),
  };
}

function macQuestion() { return costQuestion('macs', 'mac_total', 'multiply-adds'); }
function paramQuestion() { return costQuestion('params', 'params', 'parameters'); }

const QUESTION_KINDS = [firstRoleQuestion, whereQuestion, pullQuestion, wideRoleQuestion, cacheQuestion,
                        macQuestion, paramQuestion, variantRoleQuestion];

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
  const questions = QUESTION_KINDS.map(make => make()).filter(q => q);
  questions.forEach((q, n) => list.append(questionView(q, n)));
}

function questionView(q, n) {
  const item = el('li', { 'data-kind': q.kind, 'data-variant': q.at.variant, 'data-map': q.at.map,
                          'data-query': q.at.query });
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
    proof.replaceChildren(el('p', {}, 'The view that shows it:'), q.proof());
    proof.hidden = false;
  });
  const legend = el('legend', { class: 'question' }, `${n + 1}. ${q.text}`);
  item.append(el('fieldset', {}, legend, options), reveal, verdict, proof);
  return item;
}
