import { describe, expect, it } from 'vitest';
import { href, html } from './html.js';

describe('html', () => {
  it('escapes every interpolated value, joins arrays, and keeps nested templates as they are', () => {
    const hostile = `<script>alert("x")</script>' onfocus='y`;
    const out = html`<td title="${hostile}">${hostile}</td>${[html`<b>${'&'}</b>`, 1, null, undefined, false]}`;
    expect(out.value).toBe(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onfocus=&#39;y">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onfocus=&#39;y</td><b>&amp;</b>1',
    );
  });

  it('builds links under the base path with an encoded query, skipping empty values', () => {
    expect(href('/', '/record', { tenant: 'a&b', key: 'k', empty: '', none: undefined })).toBe(
      '/record?tenant=a%26b&key=k',
    );
    expect(href('/admin/console', '/', {})).toBe('/admin/console/');
  });
});
