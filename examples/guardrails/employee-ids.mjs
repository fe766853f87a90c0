// A custom guardrail for Model Gateway (README "Guardrails"): finds employee ids such as
// EMP-004211. The gateway calls find(text) on every message text (and, with `on: output` or
// `both`, on answers and streams) and applies the guardrail's action, mode and replacement
// to the spans it returns. find must be fast and linear in the text: it runs on every request.
//
//   guardrails:
//     - name: employee-ids
//       type: custom
//       module: ./examples/guardrails/employee-ids.mjs   # relative to the configuration file
//       action: redact
//       on: both

const pattern = /\bEMP-\d{6}\b/g;

/** @param {string} text @returns {Array<{start: number, end: number, entity: string}>} */
export function find(text) {
  const spans = [];
  for (const match of text.matchAll(pattern)) spans.push({ start: match.index, end: match.index + match[0].length, entity: 'employee_id' });
  return spans;
}
