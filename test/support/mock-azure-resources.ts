import type { ServerResponse } from 'node:http';

// Answers of the mock Azure OpenAI for files, batches, audio and images (shapes of Azure's
// REST reference). `operation` is the path after `/openai/` (classic, deployment stripped)
// or `/openai/v1/`.

const file = {
  status: 'processed',
  bytes: 140,
  purpose: 'batch',
  filename: 'requests.jsonl',
  id: 'file-azure0001',
  created_at: 1732470100,
  object: 'file',
};

const batch = {
  id: 'batch_azure0001',
  object: 'batch',
  endpoint: '/chat/completions',
  errors: null,
  input_file_id: 'file-azure0001',
  completion_window: '24h',
  status: 'validating',
  output_file_id: null,
  error_file_id: null,
  created_at: 1732470200,
  request_counts: { total: 0, completed: 0, failed: 0 },
  metadata: null,
};

const image = {
  created: 1732470300,
  data: [
    {
      content_filter_results: { self_harm: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } },
      prompt_filter_results: { jailbreak: { filtered: false, detected: false }, violence: { filtered: false, severity: 'safe' } },
      revised_prompt: 'A watercolor lighthouse at dawn.',
      url: 'https://dalleprodsec.blob.core.windows.net/private/images/generated_00.png',
    },
  ],
};

export const resourceOperations =
  /^(files(\/[^/]+(\/content)?)?|batches(\/[^/]+(\/cancel)?)?|audio\/(speech|transcriptions)|images\/generations)$/;

/** Answers one files, batches, audio or images request; true when `operation` is one of them. */
export function answerResource(method: string, operation: string, response: ServerResponse): boolean {
  const json = (payload: unknown): void => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(payload));
  };
  if (operation === 'files') json(method === 'GET' ? { data: [file], object: 'list' } : file);
  else if (operation.startsWith('files/')) json(file);
  else if (operation === 'batches') json(method === 'GET' ? { data: [batch], object: 'list', has_more: false } : batch);
  else if (operation.startsWith('batches/')) json(batch);
  else if (operation === 'audio/transcriptions') json({ text: 'Hello from Azure audio' });
  else if (operation === 'images/generations') json(image);
  else if (operation === 'audio/speech') {
    response.writeHead(200, { 'content-type': 'audio/mpeg' });
    response.end(Buffer.from([0xff, 0xf3, 0x44, 0xc4]));
  } else return false;
  return true;
}
