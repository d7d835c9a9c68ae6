// The console's one stylesheet, served by the handler at a versioned path (the CSP admits styles
// from this origin only: no inline style anywhere). Colours keep at least 4.5:1 contrast
// (WCAG AA) against their background, in the light and the dark scheme; focus is always visible.
import { createHash } from 'node:crypto';

export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #4a5260; --bg: #ffffff; --panel: #f3f5f8;
  --line: #c9ced6; --accent: #0b57d0; --bad: #a4161a; --bad-bg: #fde8e8; --warn: #7a4b00; --warn-bg: #fff3d6;
  --ok: #1d6b2f; --ok-bg: #e3f4e7; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaee; --muted: #b4bbc6; --bg: #15181d; --panel: #1f242b;
  --line: #3a414c; --accent: #8ab4ff; --bad: #ffb3b3; --bad-bg: #3d1a1b; --warn: #ffd27a; --warn-bg: #3a2c10;
  --ok: #9be3ab; --ok-bg: #15331d; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 1; }
header.top { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem;
  padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.top .who { color: var(--muted); }
main { padding: 1rem 1.5rem 3rem; max-width: 80rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
nav.states ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; padding: 0; margin: 0 0 1rem; }
nav.states a { display: inline-block; padding: .35rem .75rem; border: 1px solid var(--line); border-radius: .4rem;
  text-decoration: none; }
nav.states a[aria-current="page"] { background: var(--accent); color: var(--bg); border-color: var(--accent); font-weight: 600; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; padding: .75rem;
  background: var(--panel); border: 1px solid var(--line); border-radius: .4rem; margin-bottom: 1rem; }
label { display: block; font-weight: 600; font-size: .9rem; margin-bottom: .2rem; }
.field { display: flex; flex-direction: column; }
input, select, textarea { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--muted);
  border-radius: .3rem; padding: .35rem .5rem; }
textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; }
button { font: inherit; font-weight: 600; padding: .45rem 1rem; border-radius: .3rem; border: 1px solid var(--accent);
  background: var(--accent); color: var(--bg); cursor: pointer; }
button.secondary { background: var(--bg); color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); color: var(--bg); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid var(--line); }
th { font-size: .85rem; color: var(--muted); }
.text { unicode-bidi: isolate; overflow-wrap: anywhere; }
td.text { overflow-wrap: break-word; }
.table-wrap { overflow-x: auto; }
.nowrap { white-space: nowrap; }
.mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9em; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: .3rem; font-size: .85rem; font-weight: 600; }
.badge.indeterminate, .badge.abandoned { background: var(--bad-bg); color: var(--bad); }
.badge.lease_expired, .badge.in_progress { background: var(--warn-bg); color: var(--warn); }
.badge.completed { background: var(--ok-bg); color: var(--ok); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.25rem; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--muted); }
dl.facts dd { margin: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); border: 1px solid var(--line);
  border-radius: .3rem; padding: .6rem; margin: .25rem 0; }
.notice { border: 1px solid var(--line); border-left-width: .35rem; border-radius: .3rem; padding: .6rem .8rem; margin: 1rem 0; }
.notice.ok { border-color: var(--ok); background: var(--ok-bg); }
.notice.warn { border-color: var(--warn); background: var(--warn-bg); }
.notice.bad { border-color: var(--bad); background: var(--bad-bg); }
.actions { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
.actions section { border: 1px solid var(--line); border-radius: .4rem; padding: 1rem; }
.actions h2 { margin-top: 0; }
.row { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; margin-top: .75rem; }
.paging { display: flex; gap: 1rem; margin-top: 1rem; }
`;

/** The path of the stylesheet under the console: versioned by its content, so it can be cached forever. */
export const STYLESHEET_PATH = `/assets/console.${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12)}.css`;
