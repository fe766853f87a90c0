/** What `npm run demo` prints once the gateway listens: a curl command and an `openai` snippet. */
export function demoBanner(url: string, key: string, model: string): string {
  return `
Model Gateway demo: the gateway listens on ${url}, in front of a bundled mock provider
(no provider key needed; the gateway's key is "${key}"). Try it from another terminal:

curl -s ${url}/v1/chat/completions \\
  -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\
  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'

Streaming: add "stream": true to the body (and curl -N).

With the openai package (npm install openai), in an .mjs file:

import OpenAI from 'openai';
const client = new OpenAI({ baseURL: '${url}/v1', apiKey: '${key}' });
const reply = await client.chat.completions.create({
  model: '${model}',
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(reply.choices[0].message.content);

Dashboard: ${url}/dashboard (key "${key}"). Press Ctrl-C to stop.
`;
}
