// The page shell: title, the operator, a skip link, the stylesheet. No script, no inline style.

import { href, html, type SafeHtml } from '../html.js';
import { displayName } from '../operator.js';
import type { ConsoleOperator } from '../options.js';
import { STYLESHEET_PATH } from '../stylesheet.js';

export interface PageFrame {
  readonly basePath: string;
  readonly operator?: ConsoleOperator | undefined;
}

/** A whole HTML document around `body`. */
export function page(frame: PageFrame, title: string, body: SafeHtml): string {
  const who =
    frame.operator === undefined
      ? ''
      : html`<span class="who">Signed in as <span class="text">${displayName(frame.operator)}</span></span>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · toolfence console</title>
<link rel="stylesheet" href="${href(frame.basePath, STYLESHEET_PATH)}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="${href(frame.basePath, '/')}">toolfence console</a>${who}</header>
<main id="main">
${body}
</main>
</body>
</html>
`.value;
}

/** An error page: the status, what went wrong (escaped), a way back. */
export function errorPage(frame: PageFrame, status: number, title: string, detail: string): string {
  return page(
    frame,
    title,
    html`<h1>${title}</h1>
<p class="notice bad" role="alert">${detail}</p>
<p><a href="${href(frame.basePath, '/')}">Back to the list</a> <span class="muted">(HTTP ${status})</span></p>`,
  );
}
