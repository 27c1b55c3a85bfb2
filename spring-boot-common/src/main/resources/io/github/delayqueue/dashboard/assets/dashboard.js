// The delay-queue dashboard: reads the application's JSON under api/ and shows it.
// Every value from Redis goes into the page as text (textContent), never as HTML.
'use strict';

const STATES = ['scheduled', 'ready', 'in-flight', 'dead'];
const PAGE_SIZE = 20;
const REFRESH_MS = 5000;
let refreshTimer = null;
let canWrite = false;
let notice = null;
// Readings of the application's meters, oldest first: the last 5 minutes.
const readings = [];
const MAX_READINGS = 60;
// The last reading of the Redis servers, read again after REDIS_REFRESH_MS.
let redisReading = null;
const REDIS_REFRESH_MS = 30000;

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null) {
      node.setAttribute(name, String(value));
    }
  }
  for (const child of children) {
    if (child === undefined || child === null) {
      continue;
    }
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// "PT1M30.5S" -> "1 min 30 s"; anything else as it is.
function duration(iso) {
  const parts = /^PT(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?$/.exec(iso || '');
  if (!parts) {
    return iso;
  }
  const ms = ((+(parts[1] || 0)) * 3600 + (+(parts[2] || 0)) * 60 + (+(parts[3] || 0))) * 1000;
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  if (ms < 3600000) return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  return Math.floor(ms / 3600000) + ' h ' + Math.round((ms % 3600000) / 60000) + ' min';
}

// An instant with how far it is from now: "2026-11-26 21:07:48Z (in 10 min)".
function instant(iso) {
  if (!iso) {
    return '—';
  }
  const millis = Date.parse(iso) - Date.now();
  const far = Math.abs(millis);
  const amount = far < 60000 ? Math.round(far / 1000) + ' s'
    : far < 3600000 ? Math.round(far / 60000) + ' min'
      : far < 172800000 ? Math.round(far / 3600000) + ' h' : Math.round(far / 86400000) + ' d';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') + (millis >= 0 ? ' (in ' + amount + ')' : ' (' + amount + ' ago)');
}

function deadLetters(count) {
  return count === 1 ? '1 dead letter' : count + ' dead letters';
}

function topicLink(topic, state, offset, group) {
  let hash = '#/topics/' + encodeURIComponent(topic);
  const query = [];
  if (state) query.push('state=' + encodeURIComponent(state));
  if (offset) query.push('offset=' + offset);
  if (group) query.push('group=' + encodeURIComponent(group));
  return query.length ? hash + '?' + query.join('&') : hash;
}

function messageLink(topic, id) {
  return '#/topics/' + encodeURIComponent(topic) + '/messages/' + encodeURIComponent(id);
}

// Calls the dashboard's JSON API; fails with the server's error message.
async function call(path, options) {
  const response = await fetch('api/' + path, Object.assign({ credentials: 'same-origin' }, options));
  let body = null;
  try {
    body = await response.json();
  } catch (ignored) {
    body = null;
  }
  if (!response.ok) {
    throw new Error((body && body.error) || ('HTTP ' + response.status));
  }
  return body;
}

function read(path) {
  return call(path, { headers: { Accept: 'application/json' } });
}

// Sends an action; only the page itself can: it needs the dashboard's header and JSON.
function act(path, body) {
  return call(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Delay-Queue-Dashboard': '1' },
    body: JSON.stringify(body)
  });
}

function actionButton(label, run, question) {
  const button = el('button', { type: 'button', class: 'action' }, label);
  button.addEventListener('click', async () => {
    if (question && !window.confirm(question)) {
      return;
    }
    button.disabled = true;
    try {
      const result = await run();
      const detail = result.detail || (result.action + ': ' + result.affected);
      notice = { text: (result.id ? result.id + ': ' : result.topic + ': ') + detail, error: false };
    } catch (error) {
      notice = { text: error.message, error: true };
    }
    route();
  });
  return button;
}

function show(...given) {
  const view = document.getElementById('view');
  const nodes = given.filter((node) => node !== null && node !== undefined);
  if (notice) {
    nodes.unshift(el('p', { id: 'notice', class: notice.error ? 'error' : 'notice', role: 'status' }, notice.text));
    notice = null;
  }
  view.replaceChildren(...nodes);
}

function showError(error) {
  show(el('p', { class: 'error', role: 'alert' }, error.message));
}

function listenerCell(listener) {
  if (!listener) {
    return el('td', { class: 'muted' }, 'none here');
  }
  return el('td', { class: 'state-' + listener.state, title: listener.method },
    listener.state + (listener.rateLimit ? ' · ' + listener.rateLimit : ''));
}

function readyCell(topic) {
  const byPriority = topic.readyByPriority || {};
  const priorities = Object.keys(byPriority);
  const parts = priorities.map((p) => 'priority ' + p + ': ' + byPriority[p]);
  const busiest = topic.busiestGroups || {};
  const groups = Object.keys(busiest);
  if (groups.length) {
    parts.push(topic.groupsWithReady + ' groups ready, the busiest: '
      + groups.map((g) => g + ': ' + busiest[g]).join(', '));
  }
  return el('td', { class: 'num', title: parts.length ? parts.join('; ') : null }, topic.ready);
}

// The in-flight count, with the groups that have the most messages in flight on hover.
function inFlightCell(topic) {
  const busiest = topic.busiestInFlight || {};
  const groups = Object.keys(busiest);
  return el('td', {
    class: 'num',
    title: groups.length ? 'the groups with the most in flight: ' + groups.map((g) => g + ': ' + busiest[g]).join(', ') : null
  }, topic.inFlight);
}

// A group read by name on a topic's page: its counts, whether it waits at its limit, its next ids.
function groupSection(topic, state, data, group) {
  const input = el('input', { id: 'find-group', placeholder: 'group', 'aria-label': 'group', maxlength: 200 });
  input.value = group || '';
  const form = el('form', { id: 'group-form', class: 'group-form' }, 'Find a group: ', input, ' ',
    el('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = topicLink(topic, state, 0, input.value.trim());
  });
  const pauses = Object.entries(data.firstPausesToEnd || {});
  const paused = pauses.length
    ? el('p', { id: 'paused-groups' }, data.pausedGroups + (data.pausedGroups === 1 ? ' group paused: ' : ' groups paused: '),
      ...pauses.flatMap(([name, end], i) => [i ? ', ' : null,
        el('a', { href: topicLink(topic, state, 0, name) }, name),
        ' (' + (end === 'until resumed' ? end : 'until ' + instant(end)) + ')']),
      data.pausedGroups > pauses.length ? ', …' : null)
    : null;
  const found = data.group;
  if (!found) {
    return el('section', { id: 'group' }, form, paused);
  }
  const facts = found.ready + ' ready · ' + found.inFlight + ' in flight'
    + (found.waitingAtLimit ? ' · waiting at its concurrency limit' : '')
    + (found.paused ? ' · paused ' + (found.pausedUntil ? 'until ' + instant(found.pausedUntil) : 'until resumed') : '');
  const path = 'topic/actions?' + new URLSearchParams({ topic: topic });
  const groupAction = (action) => act(path, { action: action, group: found.name });
  const actions = canWrite ? el('p', { id: 'group-actions' }, found.paused
    ? actionButton('Resume group', () => groupAction('resume-group'))
    : actionButton('Pause group', () => groupAction('pause-group'),
      'Pause group ' + found.name + ' of ' + topic + ' in every application until it is resumed?')) : null;
  const next = found.firstReady.length
    ? el('p', { id: 'group-next' }, 'Next ready: ',
      ...found.firstReady.flatMap((id, i) => [i ? ', ' : null, el('a', { href: messageLink(topic, id) }, id)]))
    : el('p', { class: 'muted' }, 'No ready message.');
  return el('section', { id: 'group' }, form, paused,
    el('p', { id: 'group-facts' }, el('strong', null, found.name), ': ' + facts), next, actions);
}

// Per-second rates between readings, and the lateness of each reading.
function series() {
  const sent = [], delivered = [], failed = [], lateness = [];
  for (const reading of readings) {
    const m = reading.meters;
    lateness.push(m.latenessP99Ms !== undefined ? m.latenessP99Ms : m.latenessMaxMs);
  }
  for (let i = 1; i < readings.length; i++) {
    const seconds = (readings[i].at - readings[i - 1].at) / 1000;
    const rate = (name) => Math.max(0, (readings[i].meters[name] - readings[i - 1].meters[name]) / seconds);
    sent.push(rate('sent'));
    delivered.push(rate('delivered'));
    failed.push(rate('failed'));
  }
  return { sent, delivered, failed, lateness };
}

function sparkline(values) {
  const svgNs = 'http://www.w3.org/2000/svg';
  const width = 220, height = 48;
  const svg = document.createElementNS(svgNs, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  if (values.length > 1) {
    const top = Math.max(...values, 1e-9);
    // The history so far fills the width; at most the last 5 minutes.
    const span = values.length - 1;
    const points = values.map((value, i) => (i * width / span).toFixed(1) + ','
      + (height - 2 - (value / top) * (height - 4)).toFixed(1));
    const line = document.createElementNS(svgNs, 'polyline');
    line.setAttribute('points', points.join(' '));
    line.setAttribute('class', 'line');
    svg.append(line);
  }
  return svg;
}

function chart(id, title, values, unit) {
  const last = values.length ? values[values.length - 1] : null;
  const shown = last === null ? '—' : (last >= 100 ? Math.round(last) : last.toFixed(1)) + ' ' + unit;
  return el('figure', { class: 'chart', id: id }, el('figcaption', null, title, ' ', el('strong', null, shown)),
    sparkline(values));
}

async function charts() {
  const meters = await read('meters');
  if (!meters.available) {
    return el('p', { class: 'muted' }, 'No meters here (add Micrometer, e.g. Spring Boot Actuator) for live charts.');
  }
  readings.push({ at: Date.now(), meters: meters });
  if (readings.length > MAX_READINGS) {
    readings.shift();
  }
  const data = series();
  const latenessTitle = meters.latenessP99Ms !== undefined ? 'Lateness p99' : 'Lateness max';
  return el('section', { class: 'charts', 'aria-label': 'This application, the last 5 minutes' },
    chart('chart-sent', 'Sent', data.sent, '/s'),
    chart('chart-delivered', 'Delivered', data.delivered, '/s'),
    chart('chart-failed', 'Failed', data.failed, '/s'),
    chart('chart-lateness', latenessTitle, data.lateness, 'ms'));
}

function bytes(count) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = count, unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return (unit === 0 ? value : value.toFixed(1)) + ' ' + units[unit];
}

// The Redis panel: mode, each primary, and the warnings of their settings.
async function redisPanel() {
  if (!redisReading || Date.now() - redisReading.at > REDIS_REFRESH_MS) {
    // A failure is kept as long as a report: the server is not asked again at once.
    try {
      redisReading = { at: Date.now(), report: await read('redis') };
    } catch (error) {
      redisReading = { at: Date.now(), error: error.message };
    }
  }
  if (redisReading.error) {
    return el('section', { id: 'redis' }, el('h2', null, 'Redis'), el('p', { class: 'error' }, redisReading.error));
  }
  const report = redisReading.report;
  const rows = report.primaries.map((primary) => el('tr', null,
    el('td', null, primary.address),
    el('td', null, primary.version || '—'),
    el('td', { class: 'num' }, primary.replicas),
    el('td', { class: 'num' }, primary.error ? '—' : bytes(primary.usedMemoryBytes)
      + (primary.maxMemoryBytes ? ' of ' + bytes(primary.maxMemoryBytes) : ' (no limit)')),
    el('td', null, primary.evictionPolicy || '—'),
    el('td', null, primary.persistence)));
  const primaries = report.primaries.length === 1 ? '1 primary' : report.primaries.length + ' primaries';
  return el('section', { id: 'redis' },
    el('h2', null, 'Redis ', el('span', { class: 'muted', id: 'redis-mode' }, report.mode + ' · ' + primaries)),
    el('table', { id: 'primaries' },
      el('thead', null, el('tr', null, el('th', null, 'Primary'), el('th', null, 'Version'),
        el('th', { class: 'num' }, 'Replicas'), el('th', { class: 'num' }, 'Memory'), el('th', null, 'Eviction policy'),
        el('th', null, 'Persistence'))),
      el('tbody', null, ...rows)),
    ...report.warnings.map((warning) => el('p', { class: 'warning' }, warning)));
}

async function overview() {
  // The Redis panel is read alongside, so that a slow server holds back nothing else.
  const redisSection = redisPanel();
  const liveCharts = await charts();
  let data;
  try {
    data = await read('overview');
  } catch (error) {
    // The Redis panel answers on its own: it still names the servers that are down.
    show(el('h1', null, 'Topics'), el('p', { class: 'error', role: 'alert' }, error.message), liveCharts,
      await redisSection);
    return;
  }
  document.getElementById('access').textContent = data.access;
  document.getElementById('clock').textContent = data.queue.time ? 'Redis time ' + data.queue.time : '';
  const rows = Object.entries(data.queue.topics).map(([name, topic]) => el('tr', { 'data-topic': name },
    el('td', null, el('a', { href: topicLink(name) }, name), unreachableMark(topic)),
    el('td', { class: 'num' }, topic.partitions),
    el('td', { class: 'num' }, topic.scheduled),
    readyCell(topic),
    inFlightCell(topic),
    el('td', { class: 'num' }, topic.dead),
    el('td', { title: topic.nextDue }, instant(topic.nextDue)),
    el('td', { title: topic.oldestLateness }, topic.oldestLateness ? duration(topic.oldestLateness) : '—'),
    listenerCell(topic.listener)));
  const table = el('table', { id: 'topics' },
    el('thead', null, el('tr', null, el('th', null, 'Topic'), el('th', { class: 'num' }, 'Partitions'),
      el('th', { class: 'num' }, 'Scheduled'),
      el('th', { class: 'num' }, 'Ready'), el('th', { class: 'num' }, 'In flight'), el('th', { class: 'num' }, 'Dead'),
      el('th', null, 'Next due'), el('th', null, 'Oldest lateness'), el('th', null, 'Listener'))),
    el('tbody', null, ...rows));
  const notes = [];
  const dataLoss = data.redisDataLost ? el('p', { id: 'data-loss', class: 'error', role: 'alert' },
    'Noticed ' + instant(data.redisDataLost.noticedAt) + ': ' + data.redisDataLost.message) : null;
  if (data.queue.truncated) {
    notes.push(el('p', { class: 'muted' }, 'Only the first topics found are listed.'));
  }
  for (const [name, problem] of Object.entries(data.queue.errors || {})) {
    notes.push(el('p', { class: 'error' }, name + ': ' + problem));
  }
  if (data.queue.schedulesError) {
    notes.push(el('p', { id: 'schedules-error', class: 'error' }, data.queue.schedulesError));
  }
  const unreachable = Object.entries(data.queue.unreachable || {});
  if (unreachable.length) {
    notes.unshift(el('div', { id: 'unreachable', class: 'error', role: 'alert' },
      el('p', null, 'Redis servers that did not answer; the topics show what the others hold:'),
      el('ul', null, ...unreachable.map(([server, what]) => el('li', null, server + ': ' + what)))));
  }
  const redis = await redisSection;
  show(el('h1', null, 'Topics'), dataLoss, liveCharts, rows.length ? table : el('p', { class: 'muted' }, 'No topics yet.'), ...notes,
    schedulesSection(data.queue.schedules || []), redis);
}

function schedulesSection(schedules) {
  if (!schedules.length) {
    return null;
  }
  const rows = schedules.map((schedule) => {
    const path = 'topic/actions?' + new URLSearchParams({ topic: schedule.topic });
    const scheduleAction = (action) => act(path, { action: action, schedule: schedule.name });
    return el('tr', { 'data-schedule': schedule.name },
      el('td', null, schedule.name),
      el('td', null, el('a', { href: topicLink(schedule.topic) }, schedule.topic)),
      el('td', null, schedule.cron ? schedule.cron + ' (' + schedule.zone + ')' : 'every ' + duration(schedule.fixedRate)),
      el('td', { title: schedule.nextFire || '' }, schedule.paused ? 'paused' : instant(schedule.nextFire)),
      el('td', null, schedule.misfire),
      el('td', null, ...(canWrite ? [
        schedule.paused ? actionButton('Resume', () => scheduleAction('resume-schedule'))
          : actionButton('Pause', () => scheduleAction('pause-schedule')), ' ',
        actionButton('Trigger now', () => scheduleAction('trigger-schedule'),
          'Send one message of ' + schedule.name + ' to ' + schedule.topic + ' now?')] : [])));
  });
  return el('section', { id: 'schedules' }, el('h2', null, 'Schedules'),
    el('table', null,
      el('thead', null, el('tr', null, el('th', null, 'Schedule'), el('th', null, 'Topic'), el('th', null, 'When'),
        el('th', null, 'Next tick'), el('th', null, 'Misfire'), el('th', null, ''))),
      el('tbody', null, ...rows)));
}

// Marks a topic some of whose partitions did not answer: its counts leave them out.
function unreachableMark(topic) {
  const partitions = Object.keys(topic.unreachable || {});
  if (!partitions.length) {
    return null;
  }
  return el('span', { class: 'error unreachable', title: Object.entries(topic.unreachable)
    .map(([partition, why]) => partition + ': ' + why).join('\n') },
  ' ' + partitions.length + ' of ' + topic.partitions + (topic.partitions === 1 ? ' partition' : ' partitions')
    + ' did not answer');
}

// The partitions of a topic that did not answer, each with why and its primary.
function unreachableList(data) {
  const partitions = Object.entries(data.unreachable || {});
  if (!partitions.length) {
    return null;
  }
  return el('div', { id: 'unreachable', class: 'error', role: 'alert' },
    el('p', null, 'Partitions that did not answer; the counts and messages are those of the others:'),
    el('ul', null, ...partitions.map(([partition, why]) => el('li', null, partition + ': ' + why))));
}

async function topicPage(topic, state, offset, group) {
  const query = new URLSearchParams({ topic: topic, state: state, offset: String(offset), limit: String(PAGE_SIZE) });
  if (group) query.set('group', group);
  const data = await read('topic?' + query);
  const tabs = el('nav', { class: 'tabs' }, ...STATES.map((name) => el('a',
    { href: topicLink(topic, name, 0, group), class: name === state ? 'current' : null },
    name + ' (' + (name === 'in-flight' ? data.inFlight : data[name]) + ')')));
  const page = data.page;
  // A partitioned topic's messages say which partition holds them; a dead letter's due time is that
  // of its last attempt.
  const partitioned = data.partitions > 1;
  const rows = page.messages.map((message) => el('tr', { 'data-id': message.id },
    el('td', null, el('a', { href: messageLink(topic, message.id) }, message.id)),
    partitioned ? el('td', { class: 'num partition' }, message.partition === undefined ? '' : message.partition) : null,
    el('td', { title: message.due }, instant(message.due)),
    el('td', { class: 'num' }, message.attempts === null || message.attempts === undefined ? '—' : message.attempts),
    el('td', { class: 'num' }, message.priority || 0),
    el('td', null, message.leaseDeadline || message.deadSince ? instant(message.leaseDeadline || message.deadSince) : ''),
    el('td', null, message.lastError || '')));
  const table = el('table', { id: 'messages' },
    el('thead', null, el('tr', null, el('th', null, 'Id'), partitioned ? el('th', { class: 'num' }, 'Partition') : null,
      state === 'dead' ? el('th', { title: 'When its last attempt was due' }, 'Last due') : el('th', null, 'Due'),
      el('th', { class: 'num' }, 'Attempts'),
      el('th', { class: 'num' }, 'Priority'), el('th', null, state === 'dead' ? 'Dead since' : 'Lease ends'), el('th', null, 'Last error'))),
    el('tbody', null, ...rows));
  const last = Math.min(page.total, page.offset + page.messages.length);
  const pager = el('div', { class: 'pager' },
    page.offset > 0 ? el('a', { href: topicLink(topic, state, Math.max(0, page.offset - PAGE_SIZE), group) }, '‹ previous') : null,
    el('span', { class: 'muted' }, page.total ? (page.offset + 1) + '–' + last + ' of ' + page.total : 'none'),
    last < page.total ? el('a', { href: topicLink(topic, state, page.offset + PAGE_SIZE, group) }, 'next ›') : null);
  const topicPath = 'topic/actions?' + new URLSearchParams({ topic: topic });
  const listener = data.listener
    ? el('p', { id: 'listener' }, 'Listener here: ', el('span', { class: 'state-' + data.listener.state }, data.listener.state),
      ' · ' + data.listener.method + ' · concurrency ' + data.listener.concurrency
        + (data.listener.rateLimit ? ' · rate limit ' + data.listener.rateLimit : '')
        + (data.listener.groupConcurrency ? ' · group concurrency ' + data.listener.groupConcurrency : '')
        + (data.listener.groupOrder ? ' · group order ' + data.listener.groupOrder : '')
        + (data.listener.groupWeights ? ' · group weights ' + Object.entries(data.listener.groupWeights)
          .map(([group, weight]) => group + ' ×' + weight).join(', ') : '')
        + (data.listener.groupRateLimit ? ' · group rate limit ' + data.listener.groupRateLimit : '')
        + (data.partitions > 1 ? ' · ' + data.partitions + ' partitions' : '') + ' ',
      canWrite && data.listener.state === 'running' ? actionButton('Pause', () => act(topicPath, { action: 'pause' })) : null,
      canWrite && data.listener.state === 'paused' ? actionButton('Resume', () => act(topicPath, { action: 'resume' })) : null)
    : el('p', { class: 'muted' }, 'No listener for this topic in this application.');
  const bulk = canWrite && state === 'dead' && data.dead > 0
    ? el('p', { class: 'bulk' },
      actionButton('Replay all ' + deadLetters(data.dead), () => act(topicPath, { action: 'replay-dead', limit: data.dead }),
        'Replay ' + deadLetters(data.dead) + ' of ' + topic + ' (due now, attempts reset)?'), ' ',
      actionButton('Purge all ' + deadLetters(data.dead), () => act(topicPath, { action: 'purge-dead', limit: data.dead }),
        'Delete ' + deadLetters(data.dead) + ' of ' + topic + ' for good?'))
    : null;
  const remembered = data.rememberedIds > 0
    ? el('p', { id: 'remembered', class: 'muted' }, data.rememberedIds + ' handled '
      + (data.rememberedIds === 1 ? 'id' : 'ids') + ' remembered for their deduplication window')
    : null;
  show(el('h1', null, el('a', { href: '#/' }, 'Topics'), ' / ', topic), unreachableList(data), listener, remembered,
    groupSection(topic, state, data, group), tabs, bulk,
    page.messages.length ? table : el('p', { class: 'muted' }, 'No ' + state + ' messages.'), pager);
}

async function messagePage(topic, id) {
  const message = await read('message?' + new URLSearchParams({ topic: topic, id: id }));
  const facts = [['State', message.state], ['Due', message.due && instant(message.due)], ['Attempts', message.attempts],
    ['Priority', message.priority], ['Group', message.group], ['Lease ends', message.leaseDeadline && instant(message.leaseDeadline)],
    ['Dead since', message.deadSince && instant(message.deadSince)],
    ['Last error', message.lastError], ['Payload size', message.payloadSize === undefined ? null : message.payloadSize + ' bytes'],
    ['Corrupt', message.corrupt], ['Too large', message.tooLong]];
  const list = el('dl', { id: 'message' });
  for (const [name, value] of facts) {
    if (value !== undefined && value !== null) {
      list.append(el('dt', null, name), el('dd', null, value));
    }
  }
  const headers = Object.entries(message.headers || {});
  const headerTable = headers.length
    ? el('table', { id: 'headers' }, el('tbody', null, ...headers.map(([name, value]) => el('tr', null, el('td', null, name), el('td', null, value)))))
    : el('p', { class: 'muted' }, 'No headers.');
  const payload = message.payload !== undefined && message.payload !== null ? message.payload
    : (message.payloadBase64 ? 'Base64: ' + message.payloadBase64 : '');
  const messagePath = 'message/actions?' + new URLSearchParams({ topic: topic, id: id });
  const buttons = [];
  if (canWrite && (message.state === 'scheduled' || message.state === 'ready')) {
    buttons.push(actionButton('Cancel', () => act(messagePath, { action: 'cancel' }), 'Cancel message ' + id + '?'));
    buttons.push(actionButton('Reschedule…', () => {
      const delay = window.prompt('New delay from now (such as 10m, 2h or PT30S)', '10m');
      return delay === null ? Promise.reject(new Error('Not rescheduled')) : act(messagePath, { action: 'reschedule', delay: delay });
    }));
  }
  if (canWrite && message.state === 'dead') {
    buttons.push(actionButton('Replay', () => act(messagePath, { action: 'replay' }), 'Replay message ' + id + ' (due now, attempts reset)?'));
    buttons.push(actionButton('Purge', () => act(messagePath, { action: 'purge' }), 'Delete message ' + id + ' for good?'));
  }
  show(el('h1', null, el('a', { href: '#/' }, 'Topics'), ' / ', el('a', { href: topicLink(topic, message.state) }, topic), ' / ', id),
    buttons.length ? el('p', { class: 'actions' }, ...buttons) : null,
    list, el('h2', null, 'Headers'), headerTable,
    el('h2', null, 'Payload' + (message.payloadTruncated ? ' (the start)' : '')), el('pre', { id: 'payload' }, payload));
}

async function route() {
  clearTimeout(refreshTimer);
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, queryString] = hash.split('?');
  const query = new URLSearchParams(queryString || '');
  const parts = path.split('/').filter((part) => part.length).map(decodeURIComponent);
  try {
    if (parts.length === 0) {
      await overview();
      // A second reading soon, so that the rates show at once.
      refreshTimer = setTimeout(route, readings.length < 2 ? 1000 : REFRESH_MS);
    } else if (parts[0] === 'topics' && parts.length === 2) {
      const state = STATES.includes(query.get('state')) ? query.get('state') : 'scheduled';
      await topicPage(parts[1], state, Math.max(0, parseInt(query.get('offset') || '0', 10) || 0), query.get('group') || '');
    } else if (parts[0] === 'topics' && parts.length === 4 && parts[2] === 'messages') {
      await messagePage(parts[1], parts[3]);
    } else {
      show(el('p', { class: 'error' }, 'No such page.'));
    }
  } catch (error) {
    showError(error);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('find').addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = messageLink(document.getElementById('find-topic').value.trim(),
      document.getElementById('find-id').value.trim());
  });
  window.addEventListener('hashchange', route);
  read('access').then((data) => {
    canWrite = data.access === 'unrestricted';
    document.getElementById('access').textContent = data.access;
  }).catch(() => {
    canWrite = false;
  }).finally(route);
});
