// The kafka-resilience console: reads and acts only through the kafkaresilience endpoint.
'use strict';

const state = {
  endpoint: null,
  actionsEnabled: false,
  csrf: null,
  overview: null,
  ladder: null, // { listener, topic, dlqTopic }
  heldPage: 0,
  heldKey: '',
  samples: [], // { at, heldKeys, dlqWritten }
  dryRunFilter: null,
};

const PAGE_SIZE = 20;
const DEAD_LETTERS_SHOWN = 100;
const REFRESH_MILLIS = 5000;
const SAMPLES_KEPT = 120; // ten minutes

// control and format characters, line and paragraph separators: CR/LF, U+202E (bidi override),
// U+2028 (line separator) and their kind would reorder or break what the page shows
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

function escaped(character) {
  return Array.from({ length: character.length },
    (_, i) => '\\u' + character.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')).join('');
}

// text from outside as the page shows it: every hidden character written as \uXXXX, as the
// server's logs write it
function printable(text) {
  return String(text).replace(HIDDEN, escaped);
}

// the same, keeping line breaks and tabs: for a value shown as a block
function printableLines(text) {
  return String(text).replace(HIDDEN, (c) => (c === '\n' || c === '\t') ? c : escaped(c));
}

// the most rows the endpoint gives one page (kafka.resilience.console.max-page-size)
function pageSize(wanted) {
  const most = state.overview && state.overview.maxPageSize;
  return most ? Math.min(wanted, most) : wanted;
}

function $(selector) { return document.querySelector(selector); }

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([name, value]) => {
    if (value === null || value === undefined || value === false) return;
    if (name === 'className') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.substring(2), value);
    else node.setAttribute(name, value === true ? '' : value);
  });
  children.flat().forEach((child) => {
    if (child === null || child === undefined) return;
    node.append(child instanceof Node ? child : document.createTextNode(printable(child)));
  });
  return node;
}

function showError(message) {
  const box = $('#error');
  box.textContent = printable(message);
  box.hidden = !message;
}

function showNotice(message) {
  const box = $('#notice');
  box.textContent = printable(message);
  box.hidden = !message;
}

async function api(path, options) {
  const init = { headers: { Accept: 'application/json' }, credentials: 'same-origin' };
  if (options && options.body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    if (state.csrf) init.headers[state.csrf.header] = state.csrf.token;
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(state.endpoint + path, init);
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!response.ok) {
    const why = (body && (body.error || body.message)) || text || response.statusText;
    throw new Error(response.status + ': ' + why);
  }
  return body;
}

function query(parameters) {
  const search = new URLSearchParams();
  Object.entries(parameters).forEach(([name, value]) => {
    if (value !== null && value !== undefined && value !== '') search.append(name, value);
  });
  const text = search.toString();
  return text ? '?' + text : '';
}

// ISO-8601 durations as the endpoint writes them (PT1H2M3.5S) to seconds
function seconds(duration) {
  if (!duration) return null;
  if (typeof duration === 'number') return duration;
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$/.exec(duration);
  if (!match) return null;
  return (Number(match[1] || 0) * 3600) + (Number(match[2] || 0) * 60) + Number(match[3] || 0);
}

function ago(duration) {
  const s = seconds(duration);
  if (s === null) return '';
  if (s < 60) return s.toFixed(0) + ' s';
  if (s < 3600) return (s / 60).toFixed(1) + ' min';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h';
  return (s / 86400).toFixed(1) + ' d';
}

function when(instant) {
  if (!instant) return '';
  const date = new Date(instant);
  return date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function until(instant) {
  if (!instant) return 'when its turn comes';
  const s = (new Date(instant).getTime() - Date.now()) / 1000;
  return when(instant) + (s > 0 ? ' (in ' + ago(s) + ')' : ' (due)');
}

// ---- the overview: listeners, ladders, stages, chart

async function refresh() {
  try {
    state.overview = await api('');
    $('#refreshed').textContent = 'refreshed ' + new Date().toLocaleTimeString();
    renderListeners();
    renderTenants();
    renderLadders();
    renderStages();
    sample();
    await loadHeld();
    showError('');
  }
  catch (e) {
    showError('Could not read the kafkaresilience endpoint: ' + e.message);
  }
}

function ladders() {
  const all = [];
  (state.overview ? state.overview.listeners : []).forEach((listener) => listener.topics.forEach((topic) => {
    all.push({ listener: listener.id, topic: topic.topic, dlqTopic: topic.dlqTopic, detail: topic });
  }));
  return all;
}

function renderListeners() {
  const body = $('#listeners tbody');
  body.replaceChildren(...state.overview.listeners.map((listener) => {
    const held = listener.topics.reduce((sum, t) => sum + (t.locks ? t.locks.keys : 0), 0);
    const locks = listener.topics.reduce((sum, t) => sum + (t.locks ? t.locks.active : 0), 0);
    const dead = listener.topics.reduce((sum, t) => sum + ((t.deadLetters && t.deadLetters.records) || 0), 0);
    const stateName = !listener.running ? 'stopped' : listener.holding ? 'holding' : listener.paused ? 'paused' : 'running';
    const stateText = stateName + (listener.holding ? ' (outage: ' + (listener.holding.reason || '') + ')' : '');
    const toggle = listener.paused
      ? el('button', { className: 'resume', type: 'button', onclick: () => act('resume', { listener: listener.id }) }, 'Resume')
      : el('button', { className: 'pause', type: 'button', onclick: () => act('pause', { listener: listener.id }) }, 'Pause');
    return el('tr', { 'data-listener': listener.id },
      el('td', null, listener.id),
      el('td', null, listener.group),
      el('td', { className: 'state state-' + stateName }, stateText),
      el('td', { className: 'number' }, listener.partitions),
      el('td', null, listener.sinceLastPoll ? ago(listener.sinceLastPoll) + ' ago' : ''),
      el('td', { className: 'number' }, listener.closedBarriers),
      el('td', { className: 'number' }, locks),
      el('td', { className: 'number held-keys' }, held),
      el('td', { className: 'number' }, dead),
      el('td', { className: 'action-column' }, toggle));
  }));
}

// listeners whose records have tenants, or that have a rate limit: each tenant's figures
// and the limit
function renderTenants() {
  const shown = state.overview.listeners.filter((listener) => listener.tenants || listener.rateLimit);
  $('#tenants-section').hidden = shown.length === 0;
  $('#tenants').replaceChildren(...shown.map((listener) => el('div', { className: 'tenants', 'data-listener': listener.id },
    el('h3', null, listener.id, ' ',
      el('span', { className: 'rate-limit muted' }, listener.rateLimit ? rateLimitText(listener.rateLimit) : 'no rate limit')),
    listener.tenants ? el('table', null,
      el('thead', null, el('tr', null, el('th', null, 'Tenant'), el('th', null, 'Records'), el('th', null, 'In flight'),
        el('th', null, 'Waiting'), el('th', null, 'Throttled (s)'))),
      el('tbody', null, listener.tenants.map((tenant) => el('tr', { 'data-tenant': tenant.tenant },
        el('td', { className: 'tenant' }, tenant.tenant),
        el('td', { className: 'number records' }, tenant.records),
        el('td', { className: 'number in-flight' }, tenant.inFlight),
        el('td', { className: 'number waiting' }, tenant.waiting),
        el('td', { className: 'number throttled' }, (seconds(tenant.throttled) || 0).toFixed(1)))))) : null)));
}

function rate(recordsPerSecond) {
  return String(Math.round(recordsPerSecond * 10) / 10);
}

function rateLimitText(limit) {
  return 'rate limit ' + rate(limit.recordsPerSecond) + ' records/s'
    + (limit.shared ? ' for the group, ' + rate(limit.here) + ' here' : '')
    + '; it held every record back for ' + (seconds(limit.throttled) || 0).toFixed(1) + ' s so far';
}

function renderLadders() {
  const select = $('#ladder');
  const all = ladders();
  const current = state.ladder ? state.ladder.listener + '|' + state.ladder.topic : null;
  if (select.options.length !== all.length) {
    select.replaceChildren(...all.map((ladder) => el('option', { value: ladder.listener + '|' + ladder.topic },
      ladder.listener + ' / ' + ladder.topic)));
  }
  // a link may name the ladder: ?listener=<id>&topic=<main topic>
  const asked = new URLSearchParams(window.location.search);
  const linked = asked.get('listener') ? asked.get('listener') + '|' + (asked.get('topic') || '') : null;
  const chosen = all.find((ladder) => ladder.listener + '|' + ladder.topic === (current || linked || select.value))
    || all.find((ladder) => linked && ladder.listener === asked.get('listener')) || all[0] || null;
  if (chosen) select.value = chosen.listener + '|' + chosen.topic;
  if (!state.ladder || !chosen || state.ladder.listener !== chosen.listener || state.ladder.topic !== chosen.topic) {
    state.samples = [];
  }
  state.ladder = chosen;
}

function renderStages() {
  const body = $('#stages tbody');
  if (!state.ladder) { body.replaceChildren(); return; }
  const topic = state.ladder.detail;
  const rows = topic.stages.map((stage) => el('tr', { 'data-stage': stage.stage },
    el('td', null, stage.stage), el('td', null, stage.topic), el('td', null, ago(stage.delay)),
    el('td', { className: 'number waiting' }, stage.waiting), el('td', { className: 'number' }, stage.lag === null ? '' : stage.lag)));
  const dlq = topic.deadLetters || {};
  rows.push(el('tr', { 'data-stage': 'dlq' }, el('td', null, 'DLQ'), el('td', null, topic.dlqTopic), el('td', null, ''),
    el('td', { className: 'number waiting' }, dlq.records === null || dlq.records === undefined ? (dlq.error || '') : dlq.records),
    el('td', null, '')));
  body.replaceChildren(...rows);
}

function sample() {
  if (!state.ladder) return;
  const topic = state.ladder.detail;
  state.samples.push({ at: Date.now(), heldKeys: topic.locks ? topic.locks.keys : 0,
    dlqWritten: (topic.deadLetters && topic.deadLetters.written) || 0 });
  if (state.samples.length > SAMPLES_KEPT) state.samples.shift();
  drawChart();
}

function drawChart() {
  const svg = $('#chart');
  const ns = 'http://www.w3.org/2000/svg';
  const samples = state.samples;
  const rates = samples.map((s, i) => {
    if (i === 0) return 0;
    const minutes = (s.at - samples[i - 1].at) / 60000;
    return minutes > 0 ? Math.max(0, s.dlqWritten - samples[i - 1].dlqWritten) / minutes : 0;
  });
  const held = samples.map((s) => s.heldKeys);
  const top = Math.max(1, ...held, ...rates);
  const line = (values, color) => {
    const path = document.createElementNS(ns, 'polyline');
    const step = values.length > 1 ? 400 / (values.length - 1) : 0;
    path.setAttribute('points', values.map((v, i) => (i * step).toFixed(1) + ',' + (115 - (v / top) * 105).toFixed(1)).join(' '));
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', color);
    path.setAttribute('stroke-width', '2');
    return path;
  };
  const label = document.createElementNS(ns, 'text');
  label.setAttribute('x', '2');
  label.setAttribute('y', '12');
  label.setAttribute('font-size', '10');
  label.textContent = 'max ' + top.toFixed(top < 10 ? 1 : 0);
  svg.replaceChildren(line(held, '#2f5fd0'), line(rates, '#c2410c'), label);
}

// ---- held keys

async function loadHeld() {
  const body = $('#held tbody');
  if (!state.ladder) { body.replaceChildren(); return; }
  const pages = await api('/held' + query({ listener: state.ladder.listener, topic: state.ladder.topic,
    key: state.heldKey, page: state.heldPage, size: pageSize(PAGE_SIZE) }));
  const page = pages[0];
  if (!page) { body.replaceChildren(); return; }
  const first = page.page * page.size;
  $('#held-summary').textContent = page.matching === 0 ? 'no held keys' + (state.heldKey ? ' match' : '')
    : (first + 1) + '-' + (first + page.held.length) + ' of ' + page.matching + ' held keys (' + page.locks + ' records in the ladder)';
  $('#held-prev').disabled = page.page === 0;
  $('#held-next').disabled = first + page.held.length >= page.matching;
  body.replaceChildren(...page.held.map((row) => el('tr', { 'data-key': row.key, 'data-lock': row.lockId },
    el('td', { className: 'key' }, row.key),
    el('td', { className: 'number' }, row.records),
    el('td', null, row.moving ? 'moving to ' + row.stage : row.pending ? 'replay, waiting for admission' : row.stage + ' (' + (row.stageTopic || '') + ')'),
    el('td', { className: 'number' }, row.attempts),
    el('td', null, ago(row.age)),
    el('td', null, until(row.due)),
    el('td', null, row.errorClass ? row.errorClass + ': ' + (row.errorMessage || '') : ''),
    el('td', { className: 'commands' }, row.commands.join(', ')),
    el('td', { className: 'action-column' },
      el('button', { className: 'retry-now', type: 'button', disabled: !row.actionable,
        onclick: () => act('retry-now', { listener: row.listener, topic: row.topic, lock: row.lockId }, row.key) }, 'Retry now'),
      ' ',
      el('button', { className: 'dead-letter-now danger', type: 'button', disabled: !row.actionable,
        onclick: () => {
          if (window.confirm('Send the head record of key ' + printable(row.key) + ' to the dead-letter topic now?')) {
            act('dead-letter-now', { listener: row.listener, topic: row.topic, lock: row.lockId }, row.key);
          }
        } }, 'Dead-letter now')))));
}

async function act(action, body, key) {
  try {
    const report = await api('/' + action, { body });
    showNotice(action + (key ? ' on key ' + key : ' of ' + report.listener) + ': ' + report.outcome + ' (by ' + report.by + ')');
    showError('');
    await refresh();
  }
  catch (e) {
    showError(action + ' failed: ' + e.message);
  }
}

// ---- dead letters

function dlqFilter() {
  return { since: $('#dlq-since').value.trim(), until: $('#dlq-until').value.trim(), key: $('#dlq-key').value.trim(),
    reason: $('#dlq-reason').value, exception: $('#dlq-exception').value.trim() };
}

async function searchDeadLetters() {
  if (!state.ladder) return;
  const filter = dlqFilter();
  try {
    const page = await api('/dead-letters' + query(Object.assign({ listener: state.ladder.listener, topic: state.ladder.topic,
      size: pageSize(DEAD_LETTERS_SHOWN) }, filter)));
    $('#dlq-summary').textContent = page.matched + ' match (' + page.scanned + ' read)'
      + (page.matched > page.deadLetters.length ? ', the newest ' + page.deadLetters.length + ' shown' : '')
      + stoppedEarly(page);
    $('#dead-letters tbody').replaceChildren(...page.deadLetters.map((row) => el('tr', { className: 'clickable',
      'data-partition': row.partition, 'data-offset': row.offset, onclick: () => showDeadLetter(row.partition, row.offset) },
      el('td', null, when(row.timestamp)), el('td', { className: 'key' }, row.key || ''), el('td', { className: 'reason' }, row.reason || ''),
      el('td', null, row.exception || ''), el('td', null, row.message || ''), el('td', { className: 'number' }, row.retryCount === null ? '' : row.retryCount),
      el('td', null, row.originalTopic ? row.originalTopic + '/' + row.originalPartition + '/' + row.originalOffset : ''),
      el('td', null, row.partition + '/' + row.offset))));
    showError('');
  }
  catch (e) {
    showError('Could not read dead letters: ' + e.message);
  }
}

async function showDeadLetter(partition, offset) {
  try {
    const detail = await api('/dead-letter' + query({ listener: state.ladder.listener, topic: state.ladder.topic, partition, offset }));
    document.querySelectorAll('#dead-letters tr.selected').forEach((row) => row.classList.remove('selected'));
    const row = document.querySelector('#dead-letters tr[data-partition="' + partition + '"][data-offset="' + offset + '"]');
    if (row) row.classList.add('selected');
    $('#dead-letter-place').textContent = state.ladder.dlqTopic + '/' + partition + '/' + offset;
    $('#dead-letter-headers tbody').replaceChildren(...detail.headers.map((header) =>
      el('tr', null, el('td', null, header.name), el('td', null, header.value === null ? '(null)' : header.value))));
    const hidden = detail.value.format === 'hidden';
    $('#dead-letter-format').textContent = hidden ? 'hidden: kafka.resilience.console.show-values'
      : detail.value.format + (detail.value.truncated ? ', first 64 KiB' : '');
    $('#dead-letter-bytes').textContent = detail.value.bytes;
    $('#dead-letter-value').textContent = hidden ? '(hidden)'
      : detail.value.content === null ? '(null)' : printableLines(detail.value.content);
    $('#dead-letter').hidden = false;
  }
  catch (e) {
    showError('Could not read the dead letter: ' + e.message);
  }
}

// what a read that stopped at the scan limit says: where, and how to read on
function stoppedEarly(answer) {
  if (answer.complete !== false) return '';
  return ' Stopped after reading ' + answer.scanned + ' records, at '
    + answer.stoppedAt.map((at) => at.partition + '/' + at.offset).join(', ') + ' (partition/offset); give a later "since" to read on.';
}

async function replay(dryRun) {
  const filter = dlqFilter();
  const body = Object.assign({ from: state.ladder.dlqTopic, dryRun }, filter);
  Object.keys(body).forEach((name) => { if (body[name] === '') delete body[name]; });
  try {
    const report = await api('', { body });
    if (dryRun) {
      state.dryRunFilter = JSON.stringify(filter);
      $('#replay').disabled = false;
      $('#replay-result').textContent = 'Dry run: ' + (report.complete ? '' : 'at least ') + report.matched
        + ' dead letters match and would go back to ' + report.target + '.' + stoppedEarly(report);
    }
    else {
      state.dryRunFilter = null;
      $('#replay').disabled = true;
      $('#replay-result').textContent = 'Replayed ' + report.published + ' of ' + report.matched + ' dead letters into '
        + report.target + '.';
    }
    showError('');
  }
  catch (e) {
    showError('Replay failed: ' + e.message);
  }
}

// ---- start

async function start() {
  try {
    const settings = await (await fetch('settings', { credentials: 'same-origin', headers: { Accept: 'application/json' } })).json();
    state.endpoint = settings.endpoint;
    state.actionsEnabled = settings.actionsEnabled;
    state.csrf = settings.csrf;
  }
  catch (e) {
    showError('Could not read the console settings: ' + e.message);
    return;
  }
  document.body.classList.toggle('read-only', !state.actionsEnabled);
  const mode = $('#mode');
  mode.textContent = state.actionsEnabled ? 'actions enabled' : 'read-only';
  mode.classList.toggle('actions', state.actionsEnabled);
  $('#ladder').addEventListener('change', () => {
    const [listener, topic] = $('#ladder').value.split('|');
    state.ladder = ladders().find((l) => l.listener === listener && l.topic === topic) || null;
    window.history.replaceState(null, '', '?' + new URLSearchParams({ listener, topic }).toString());
    state.heldPage = 0;
    state.samples = [];
    refresh();
  });
  $('#held-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.heldKey = $('#held-search').value.trim();
    state.heldPage = 0;
    loadHeld().catch((e) => showError(e.message));
  });
  $('#held-prev').addEventListener('click', () => { state.heldPage = Math.max(0, state.heldPage - 1); loadHeld(); });
  $('#held-next').addEventListener('click', () => { state.heldPage += 1; loadHeld(); });
  $('#dlq-form').addEventListener('submit', (event) => { event.preventDefault(); searchDeadLetters(); });
  $('#dlq-form').addEventListener('input', () => {
    if (state.dryRunFilter !== JSON.stringify(dlqFilter())) $('#replay').disabled = true;
  });
  $('#replay-dry-run').addEventListener('click', () => replay(true));
  $('#replay').addEventListener('click', () => {
    if (state.dryRunFilter === JSON.stringify(dlqFilter())) replay(false);
  });
  await refresh();
  setInterval(refresh, REFRESH_MILLIS);
}

document.addEventListener('DOMContentLoaded', start);
