import type { ErrorCode } from '../../errors/codes.ts';
import type { OwnedKind } from '../../ownership/ownership-store.ts';
import type { OwnedCollection } from './owned-resources.ts';

/**
 * The catalogue of OpenAI's stateful resources served on `/v1` by one generic relay
 * (http/routes/owned-relay.ts, ADR 40): which paths exist, which path parameters name an owned
 * resource, what a create answer records, which listings are served from the owner store.
 * A route is not a model call (authenticated, counted against no limit, no usage) unless it is
 * `metered`: runs, eval runs, fine-tuning jobs, videos and searches (resource-metering.ts).
 */

/** A resource tenants own, by the path parameter that names it. */
export type OwnedType = OwnedCollection;

const owned = (kind: OwnedKind, path: string, objectName: string, code: ErrorCode, headers?: Record<string, string>): OwnedType => ({
  kind,
  path,
  notFoundCode: code,
  objectName,
  ...(headers === undefined ? {} : { headers }),
});

const assistantsBeta = { 'openai-beta': 'assistants=v2' };

export const ownedTypes = {
  assistant: owned('assistant', 'assistants', 'assistant', 'assistant_not_found', assistantsBeta),
  thread: owned('thread', 'threads', 'thread', 'thread_not_found', assistantsBeta),
  vector_store: owned('vector_store', 'vector_stores', 'vector store', 'vector_store_not_found'),
  conversation: owned('conversation', 'conversations', 'conversation', 'conversation_not_found'),
  chat_completion: owned('chat_completion', 'chat/completions', 'chat completion', 'chat_completion_not_found'),
  upload: owned('upload', 'uploads', 'Upload', 'upload_not_found'),
  file: owned('file', 'files', 'File', 'file_not_found'),
  response: owned('response', 'responses', 'response', 'response_not_found'),
  fine_tuning_job: owned('fine_tuning_job', 'fine_tuning/jobs', 'fine-tuning job', 'fine_tuning_job_not_found'),
  eval: owned('eval', 'evals', 'eval', 'eval_not_found'),
  container: owned('container', 'containers', 'container', 'container_not_found'),
  video: owned('video', 'videos', 'video', 'video_not_found'),
  skill: owned('skill', 'skills', 'skill', 'skill_not_found'),
  realtime_call: owned('realtime_call', 'realtime/calls', 'call', 'realtime_call_not_found'),
  model: owned('model', 'models', 'model', 'model_not_found'),
  video_character: owned('video_character', 'videos/characters', 'character', 'video_character_not_found'),
  chatkit_session: owned('chatkit_session', 'chatkit/sessions', 'ChatKit session', 'chatkit_session_not_found'),
  chatkit_thread: owned('chatkit_thread', 'chatkit/threads', 'ChatKit thread', 'chatkit_thread_not_found'),
} as const;

export type OwnedTypeName = keyof typeof ownedTypes;

/** Path parameter -> the owned resource it names; other parameters are children reached through an owned parent. */
export const ownedParameters: Readonly<Record<string, OwnedTypeName>> = {
  assistant_id: 'assistant',
  thread_id: 'thread',
  vector_store_id: 'vector_store',
  conversation_id: 'conversation',
  completion_id: 'chat_completion',
  upload_id: 'upload',
  response_id: 'response',
  fine_tuning_job_id: 'fine_tuning_job',
  eval_id: 'eval',
  container_id: 'container',
  video_id: 'video',
  skill_id: 'skill',
  call_id: 'realtime_call',
  fine_tuned_model_checkpoint: 'model',
  character_id: 'video_character',
  session_id: 'chatkit_session',
  chatkit_thread_id: 'chatkit_thread',
  // `DELETE /v1/models/*`: the wildcard of the GET route (a model id may contain `/`).
  '*': 'model',
};

export interface CatalogueRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Fastify's pattern under `/v1` (`/v1/threads/:thread_id/runs`); the upstream path is the same without `/v1/`. */
  readonly path: string;
  /** Answer fields (dotted) recorded as owned resources: by the path's owner (a child) or the caller. */
  readonly records?: Readonly<Record<string, OwnedTypeName>>;
  /** A top-level listing: served from the owner store for callers who do not see everything. */
  readonly lists?: OwnedTypeName;
  /** The last path parameter's resource is forgotten when the upstream deleted it. */
  readonly deletes?: true;
  /** Body fields (a string or a list of strings) that must name resources the caller may see. */
  readonly references?: Readonly<Record<string, OwnedTypeName>>;
  /**
   * The body is a Responses request: the state it names (`previous_response_id`, `conversation`,
   * `item_reference` items, `responsesReferences`) is checked as `/v1/responses` checks it
   * (gateway/responses/native-ownership.ts).
   */
  readonly responsesState?: true;
  /**
   * Body fields (dotted, `*` for list items) naming a model that runs besides `model` (a realtime
   * session's, an eval's grader's): each must pass the key's model allowlist.
   */
  readonly models?: readonly string[];
  /**
   * A model runs behind this route but its usage never comes back through the gateway (a
   * realtime client secret, a call, a compaction, a grader run): admitted like a metered route
   * (limits, a spent budget refuses), no usage recorded.
   */
  readonly admits?: true;
  /** A model runs behind this route: it counts against the caller's limits and budgets, and usage is recorded (issue 30 item 3). */
  readonly metered?: MeteredKind;
  /** The answer may show a finished model run (a retrieve, a listing, a cancel): its usage is charged once, nothing is counted. */
  readonly charges?: MeteredKind;
  /**
   * An output of a model run (a video's content, a run's steps, a thread's messages): the run it
   * comes from is charged before it is relayed, when nothing read it finished yet (metered-outputs.ts).
   */
  readonly settles?: MeteredKind;
}

/** What a metered route runs, and so where its usage is read: a run's `usage`, an eval run's `per_model_usage`, a job's `trained_tokens`, a video's seconds, a search. */
export type MeteredKind = 'run' | 'eval_run' | 'fine_tuning_job' | 'video' | 'vector_store_search';

/** The files and vector stores an assistant or a thread names as its tools' resources. */
const toolResources: Readonly<Record<string, OwnedTypeName>> = {
  'tool_resources.file_search.vector_store_ids': 'vector_store',
  'tool_resources.code_interpreter.file_ids': 'file',
};

/** What `POST /v1/threads/runs` may name: the assistant, the new thread's resources and messages, the run's own resources. */
const createAndRunReferences: Readonly<Record<string, OwnedTypeName>> = {
  assistant_id: 'assistant',
  ...toolResources,
  'thread.tool_resources.file_search.vector_store_ids': 'vector_store',
  'thread.tool_resources.code_interpreter.file_ids': 'file',
  'thread.messages.*.attachments.*.file_id': 'file',
};

/** The same references under a prefix (`tools.*`, `input.*`). */
const under = (prefix: string, references: Readonly<Record<string, OwnedTypeName>>): Record<string, OwnedTypeName> =>
  Object.fromEntries(Object.entries(references).map(([field, type]) => [`${prefix}.${field}`, type]));

/** What a Responses tool names (OpenAPI `Tool`): file_search's stores, code_interpreter's and shell's container and files, skills, an image mask. */
const responsesToolState: Readonly<Record<string, OwnedTypeName>> = {
  vector_store_ids: 'vector_store',
  container: 'container',
  'container.file_ids': 'file',
  'environment.container_id': 'container',
  'environment.file_ids': 'file',
  'environment.skills.*.skill_id': 'skill',
  'input_image_mask.file_id': 'file',
};

/**
 * What a Responses input item names (OpenAPI `InputItem`): its content parts' files
 * (`input_file`, `input_image`), a tool output's files, the tools an item carries. Ids of past
 * output items (a call's `container_id`, file_search `results`) are what the upstream answered,
 * not state it reads.
 */
const responsesItemState: Readonly<Record<string, OwnedTypeName>> = {
  'content.*.file_id': 'file',
  'output.*.file_id': 'file',
  'output.file_id': 'file',
  ...under('tools.*', responsesToolState),
};

/**
 * Every owned id a Responses request body may name besides `previous_response_id`,
 * `conversation` and `item_reference` items (those are checked with the gateway's own
 * stored responses: gateway/responses/native-ownership.ts). `/v1/responses`, the
 * passthrough's `responses`, compact and input_tokens all check these.
 */
export const responsesReferences: Readonly<Record<string, OwnedTypeName>> = {
  ...under('tools.*', responsesToolState),
  ...under('input.*', responsesItemState),
};

/** A conversation's `items` are Responses input items. */
const conversationItems = under('items.*', responsesItemState);

/** The models a realtime session runs (its own, its transcription's). */
const realtimeSessionModels = ['session.model', 'session.audio.input.transcription.model'];
/** A model grader's model (`score_model`, `label_model`), also inside a `multi` grader. */
const graderModels = ['grader.model', 'grader.graders.model'];

type Entry = [string, Omit<CatalogueRoute, 'method' | 'path'>?];

/** `METHOD path` entries, grouped by resource. */
const entries: readonly Entry[] = [
  ['POST /v1/assistants', { records: { id: 'assistant' }, references: toolResources }],
  ['GET /v1/assistants', { lists: 'assistant' }],
  ['GET /v1/assistants/:assistant_id'],
  ['POST /v1/assistants/:assistant_id', { references: toolResources }],
  ['DELETE /v1/assistants/:assistant_id', { deletes: true }],
  ['POST /v1/threads', { records: { id: 'thread' }, references: { ...toolResources, 'messages.*.attachments.*.file_id': 'file' } }],
  ['POST /v1/threads/runs', { records: { thread_id: 'thread' }, references: createAndRunReferences, metered: 'run' }],
  ['GET /v1/threads/:thread_id'],
  ['POST /v1/threads/:thread_id', { references: toolResources }],
  ['DELETE /v1/threads/:thread_id', { deletes: true }],
  ['POST /v1/threads/:thread_id/messages', { references: { 'attachments.*.file_id': 'file' } }],
  ['GET /v1/threads/:thread_id/messages', { settles: 'run' }],
  ['GET /v1/threads/:thread_id/messages/:message_id', { settles: 'run' }],
  ['POST /v1/threads/:thread_id/messages/:message_id'],
  ['DELETE /v1/threads/:thread_id/messages/:message_id'],
  [
    'POST /v1/threads/:thread_id/runs',
    { references: { assistant_id: 'assistant', 'additional_messages.*.attachments.*.file_id': 'file' }, metered: 'run' },
  ],
  ['GET /v1/threads/:thread_id/runs', { charges: 'run' }],
  ['GET /v1/threads/:thread_id/runs/:run_id', { charges: 'run' }],
  ['POST /v1/threads/:thread_id/runs/:run_id', { charges: 'run' }],
  ['POST /v1/threads/:thread_id/runs/:run_id/cancel', { charges: 'run' }],
  ['POST /v1/threads/:thread_id/runs/:run_id/submit_tool_outputs', { metered: 'run' }],
  ['GET /v1/threads/:thread_id/runs/:run_id/steps', { settles: 'run' }],
  ['GET /v1/threads/:thread_id/runs/:run_id/steps/:step_id', { settles: 'run' }],
  ['POST /v1/vector_stores', { records: { id: 'vector_store' }, references: { file_ids: 'file' } }],
  ['GET /v1/vector_stores', { lists: 'vector_store' }],
  ['GET /v1/vector_stores/:vector_store_id'],
  ['POST /v1/vector_stores/:vector_store_id'],
  ['DELETE /v1/vector_stores/:vector_store_id', { deletes: true }],
  ['POST /v1/vector_stores/:vector_store_id/search', { metered: 'vector_store_search' }],
  ['POST /v1/vector_stores/:vector_store_id/files', { references: { file_id: 'file' } }],
  ['GET /v1/vector_stores/:vector_store_id/files'],
  ['GET /v1/vector_stores/:vector_store_id/files/:file_id'],
  ['POST /v1/vector_stores/:vector_store_id/files/:file_id'],
  ['DELETE /v1/vector_stores/:vector_store_id/files/:file_id'],
  ['GET /v1/vector_stores/:vector_store_id/files/:file_id/content'],
  ['POST /v1/vector_stores/:vector_store_id/file_batches', { references: { file_ids: 'file' } }],
  ['GET /v1/vector_stores/:vector_store_id/file_batches/:batch_id'],
  ['POST /v1/vector_stores/:vector_store_id/file_batches/:batch_id/cancel'],
  ['GET /v1/vector_stores/:vector_store_id/file_batches/:batch_id/files'],
  ['POST /v1/conversations', { records: { id: 'conversation' }, references: conversationItems }],
  ['GET /v1/conversations/:conversation_id'],
  ['POST /v1/conversations/:conversation_id'],
  ['DELETE /v1/conversations/:conversation_id', { deletes: true }],
  ['POST /v1/conversations/:conversation_id/items', { references: conversationItems }],
  ['GET /v1/conversations/:conversation_id/items'],
  ['GET /v1/conversations/:conversation_id/items/:item_id'],
  ['DELETE /v1/conversations/:conversation_id/items/:item_id'],
  ['GET /v1/chat/completions', { lists: 'chat_completion' }],
  ['GET /v1/chat/completions/:completion_id'],
  ['POST /v1/chat/completions/:completion_id'],
  ['DELETE /v1/chat/completions/:completion_id', { deletes: true }],
  ['GET /v1/chat/completions/:completion_id/messages'],
  ['POST /v1/uploads', { records: { id: 'upload' } }],
  ['POST /v1/uploads/:upload_id/parts'],
  ['POST /v1/uploads/:upload_id/complete', { records: { 'file.id': 'file' } }],
  ['POST /v1/uploads/:upload_id/cancel'],
  ['POST /v1/responses/:response_id/cancel'],
  ['POST /v1/responses/compact', { responsesState: true, admits: true }],
  ['POST /v1/responses/input_tokens', { responsesState: true }],
  [
    'POST /v1/fine_tuning/jobs',
    {
      records: { id: 'fine_tuning_job' },
      references: { training_file: 'file', validation_file: 'file' },
      metered: 'fine_tuning_job',
      models: graderModels.map((path) => `method.reinforcement.${path}`),
    },
  ],
  ['GET /v1/fine_tuning/jobs', { lists: 'fine_tuning_job', charges: 'fine_tuning_job' }],
  ['GET /v1/fine_tuning/jobs/:fine_tuning_job_id', { records: { fine_tuned_model: 'model' }, charges: 'fine_tuning_job' }],
  ['POST /v1/fine_tuning/jobs/:fine_tuning_job_id/cancel', { charges: 'fine_tuning_job' }],
  ['POST /v1/fine_tuning/jobs/:fine_tuning_job_id/pause', { charges: 'fine_tuning_job' }],
  ['POST /v1/fine_tuning/jobs/:fine_tuning_job_id/resume', { charges: 'fine_tuning_job' }],
  ['GET /v1/fine_tuning/jobs/:fine_tuning_job_id/events', { settles: 'fine_tuning_job' }],
  ['GET /v1/fine_tuning/jobs/:fine_tuning_job_id/checkpoints', { settles: 'fine_tuning_job' }],
  ['POST /v1/fine_tuning/checkpoints/:fine_tuned_model_checkpoint/permissions'],
  ['GET /v1/fine_tuning/checkpoints/:fine_tuned_model_checkpoint/permissions'],
  ['DELETE /v1/fine_tuning/checkpoints/:fine_tuned_model_checkpoint/permissions/:permission_id'],
  ['POST /v1/fine_tuning/alpha/graders/run', { models: graderModels, admits: true }],
  ['POST /v1/fine_tuning/alpha/graders/validate', { models: graderModels }],
  ['POST /v1/evals', { records: { id: 'eval' }, models: ['testing_criteria.*.model', 'testing_criteria.*.graders.model'] }],
  ['GET /v1/evals', { lists: 'eval' }],
  ['GET /v1/evals/:eval_id'],
  ['POST /v1/evals/:eval_id'],
  ['DELETE /v1/evals/:eval_id', { deletes: true }],
  ['POST /v1/evals/:eval_id/runs', { metered: 'eval_run', models: ['data_source.model'] }],
  ['GET /v1/evals/:eval_id/runs', { charges: 'eval_run' }],
  ['GET /v1/evals/:eval_id/runs/:run_id', { charges: 'eval_run' }],
  ['POST /v1/evals/:eval_id/runs/:run_id', { charges: 'eval_run' }],
  ['DELETE /v1/evals/:eval_id/runs/:run_id'],
  ['GET /v1/evals/:eval_id/runs/:run_id/output_items', { settles: 'eval_run' }],
  ['GET /v1/evals/:eval_id/runs/:run_id/output_items/:output_item_id', { settles: 'eval_run' }],
  ['POST /v1/containers', { records: { id: 'container' } }],
  ['GET /v1/containers', { lists: 'container' }],
  ['GET /v1/containers/:container_id'],
  ['DELETE /v1/containers/:container_id', { deletes: true }],
  ['POST /v1/containers/:container_id/files'],
  ['GET /v1/containers/:container_id/files'],
  ['GET /v1/containers/:container_id/files/:file_id'],
  ['DELETE /v1/containers/:container_id/files/:file_id'],
  ['GET /v1/containers/:container_id/files/:file_id/content'],
  ['POST /v1/videos', { records: { id: 'video' }, metered: 'video' }],
  ['GET /v1/videos', { lists: 'video', charges: 'video' }],
  ['GET /v1/videos/:video_id', { charges: 'video' }],
  ['DELETE /v1/videos/:video_id', { deletes: true }],
  ['GET /v1/videos/:video_id/content', { settles: 'video' }],
  ['POST /v1/videos/:video_id/remix', { records: { id: 'video' }, metered: 'video' }],
  ['POST /v1/videos/edits', { records: { id: 'video' }, references: { video: 'video' }, metered: 'video' }],
  ['POST /v1/videos/extensions', { records: { id: 'video' }, references: { video: 'video' }, metered: 'video' }],
  ['POST /v1/videos/characters', { records: { id: 'video_character' } }],
  // Static segments win (Fastify, as OpenAI): `/v1/videos/characters/content` is a character, never a video's content (ADR 40).
  ['GET /v1/videos/characters/:character_id'],
  ['POST /v1/chatkit/sessions', { records: { id: 'chatkit_session' } }],
  ['POST /v1/chatkit/sessions/:session_id/cancel'],
  ['GET /v1/chatkit/threads', { lists: 'chatkit_thread' }],
  ['GET /v1/chatkit/threads/:chatkit_thread_id'],
  ['DELETE /v1/chatkit/threads/:chatkit_thread_id', { deletes: true }],
  ['GET /v1/chatkit/threads/:chatkit_thread_id/items'],
  ['POST /v1/realtime/client_secrets', { models: realtimeSessionModels, admits: true }],
  ['POST /v1/realtime/calls', { models: realtimeSessionModels, admits: true }],
  ['POST /v1/realtime/calls/:call_id/accept', { models: ['audio.input.transcription.model'], admits: true }],
  ['POST /v1/realtime/calls/:call_id/hangup'],
  ['POST /v1/realtime/calls/:call_id/refer'],
  ['POST /v1/realtime/calls/:call_id/reject'],
  ['POST /v1/skills', { records: { id: 'skill' } }],
  ['GET /v1/skills', { lists: 'skill' }],
  ['GET /v1/skills/:skill_id'],
  ['POST /v1/skills/:skill_id'],
  ['DELETE /v1/skills/:skill_id', { deletes: true }],
  ['GET /v1/skills/:skill_id/content'],
  ['POST /v1/skills/:skill_id/versions'],
  ['GET /v1/skills/:skill_id/versions'],
  ['GET /v1/skills/:skill_id/versions/:version'],
  ['DELETE /v1/skills/:skill_id/versions/:version'],
  ['GET /v1/skills/:skill_id/versions/:version/content'],
  ['DELETE /v1/models/*', { deletes: true }],
];

export const catalogue: readonly CatalogueRoute[] = entries.map(([route, options]) => {
  const [method, path] = route.split(' ') as [CatalogueRoute['method'], string];
  return { method, path, ...options };
});

/** The owned resources a route's path names, in path order: `[parameter, type]`. */
export function ownedParametersOf(path: string): [string, OwnedType][] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':') || segment === '*')
    .map((segment) => segment.replace(/^:/, ''))
    .flatMap((name) => {
      const type = ownedParameters[name];
      return type === undefined ? [] : [[name, ownedTypes[type]] as [string, OwnedType]];
    });
}

/** The headers an upstream call of this route carries besides the client's own `openai-beta`. */
export function typeHeadersOf(path: string): Record<string, string> {
  const first = path.split('/')[2] ?? '';
  return first === 'assistants' || first === 'threads' ? { ...assistantsBeta } : {};
}
