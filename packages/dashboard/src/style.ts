/** The dashboard's one stylesheet, served from `/assets/style.css` (no CDN, no inline style: the CSP forbids both). */
export const STYLE = `
:root { --fg: #1d2330; --muted: #6b7384; --line: #dde1e8; --bg: #f6f7f9; --accent: #3557c5; font-family: system-ui, sans-serif; }
body { margin: 0; color: var(--fg); background: var(--bg); font-size: 14px; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .7rem 1.5rem; background: #1d2330; color: #fff; }
header a { color: #cfd6e6; text-decoration: none; margin-right: 1rem; }
header a:hover { color: #fff; }
.brand { font-size: 1.1rem; letter-spacing: .02em; }
button.live { margin-left: auto; background: #2c3446; color: #fff; border: 1px solid #56607a; border-radius: 3px; padding: .2rem .6rem; cursor: pointer; }
button.danger { background: #b42318; color: #fff; border: 1px solid #8f1c13; border-radius: 3px; padding: .35rem .8rem; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
fieldset.bulk-controls { display: flex; gap: 1rem; align-items: center; margin-top: .8rem; border: 1px solid var(--line); background: #fff; }
.overdue { color: #a86500; font-weight: 600; }
.error-code { font-family: ui-monospace, monospace; font-size: 12px; color: #b42318; }
button.live[aria-pressed="false"] { background: transparent; color: #cfd6e6; }
main { padding: 1rem 1.5rem 3rem; max-width: 1200px; }
h1 { font-size: 1.3rem; word-break: break-all; }
h2 { font-size: 1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); width: 100%; }
th, td { padding: .35rem .55rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #eef0f4; font-weight: 600; font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.mono, pre, .code { font-family: ui-monospace, monospace; font-size: 12px; }
pre.json { background: #fff; border: 1px solid var(--line); padding: .6rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-word; }
.badge { background: #b7791f; color: #fff; border-radius: 3px; padding: .1rem .45rem; font-size: 12px; }
.status { border-radius: 3px; padding: .05rem .4rem; font-size: 12px; background: #e2e6ee; }
.status-success { background: #d4f0dc; } .status-failed { background: #f8d7d7; } .status-cancelled { background: #eadcf5; }
.status-running, .status-pausing { background: #d8e6fb; } .status-paused, .status-blocked { background: #fbecc8; }
.health-ready { color: #1e7b3a; } .health-degraded { color: #a86500; } .health-unavailable { color: #b42318; }
.notice { padding: .6rem .8rem; border-radius: 4px; border: 1px solid; }
.notice.ok { background: #e8f6ec; border-color: #9fd3ae; } .notice.warn { background: #fff5dc; border-color: #e5c06b; }
.notice.error { background: #fdeaea; border-color: #e8a5a5; }
.tiles { display: flex; gap: 1rem; margin-top: 1.5rem; }
.tile { background: #fff; border: 1px solid var(--line); padding: .8rem 1rem; border-radius: 4px; color: var(--fg); text-decoration: none; }
.big { display: block; font-size: 1.6rem; font-weight: 600; }
.chart { margin: 0; background: #fff; border: 1px solid var(--line); padding: .6rem; }
.chart rect { fill: var(--accent); } .chart .guide { stroke: var(--line); } .chart .label { fill: var(--muted); font-size: 11px; }
figcaption { color: var(--muted); font-size: 12px; margin-top: .3rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; background: #fff; border: 1px solid var(--line); padding: .8rem; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-all; }
.actions { display: flex; flex-wrap: wrap; gap: .8rem; margin-top: 1rem; }
form.action { display: flex; gap: .3rem; }
form.filter { display: flex; gap: 1rem; align-items: end; margin-bottom: 1rem; }
input[type=text], select { padding: .3rem; border: 1px solid var(--line); border-radius: 3px; }
button { padding: .3rem .8rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 3px; cursor: pointer; }
ol.timeline { list-style: none; padding: 0; border-left: 2px solid var(--line); margin-left: .4rem; }
ol.timeline li { padding: .3rem 0 .6rem 1rem; position: relative; }
ol.timeline li::before { content: ''; position: absolute; left: -6px; top: .6rem; width: 10px; height: 10px; border-radius: 50%; background: var(--accent); }
.when { font-size: 12px; color: var(--muted); }
.paging { margin-top: 1rem; }
`;

/** The dashboard's icon, served from `/assets/favicon.svg`. */
export const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3557c5"/><path d="M4 4h4a4 4 0 0 1 0 8H4z" fill="#fff"/></svg>';
