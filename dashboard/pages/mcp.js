// MCP: upstream servers and virtual MCP servers (placeholder until the admin API lands).

import { h, replace } from '../lib/dom.js';
import { pageHeader } from '../lib/ui.js';

export function mcpPage(main) {
  replace(main, pageHeader('MCP', 'MCP servers and virtual MCP servers.'), h('p', { class: 'empty', text: 'Coming soon.' }));
  return () => {};
}
