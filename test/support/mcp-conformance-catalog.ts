import type { Tool } from '@modelcontextprotocol/sdk/types.js';

// What test/support/mcp-conformance-server.ts offers: the tool list and the elicitation forms the
// conformance scenarios expect.

export const pngPixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const wavSample = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const emptyObject = { type: 'object' as const, properties: {} };
export const conformanceTools: Tool[] = [
  { name: 'test_simple_text', description: 'Returns one text part', inputSchema: emptyObject },
  { name: 'test_image_content', description: 'Returns one image part', inputSchema: emptyObject },
  { name: 'test_audio_content', description: 'Returns one audio part', inputSchema: emptyObject },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource', inputSchema: emptyObject },
  { name: 'test_multiple_content_types', description: 'Returns text, image and resource parts', inputSchema: emptyObject },
  { name: 'test_tool_with_logging', description: 'Logs three messages while it runs', inputSchema: emptyObject },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100', inputSchema: emptyObject },
  { name: 'test_error_handling', description: 'Always fails', inputSchema: emptyObject },
  {
    name: 'test_reconnection',
    description: 'Closes its SSE stream mid-call and answers after the client reconnects',
    inputSchema: emptyObject,
  },
  {
    name: 'test_sampling',
    description: 'Asks the client to sample',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  { name: 'test_elicitation_sep1034_defaults', description: 'Elicitation with defaults (SEP-1034)', inputSchema: emptyObject },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicitation with enum schemas (SEP-1330)', inputSchema: emptyObject },
  {
    name: 'json_schema_2020_12_tool',
    description: 'JSON Schema 2020-12 input schema (SEP-1613)',
    // As the suite's reference server: SEP-2106 (alpha suite) checks that $anchor, allOf/anyOf
    // and if/then/else survive tools/list, as SEP-1613 checks $schema, $defs and additionalProperties.
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  },
];

export const defaultsSchema = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, description: 'User name', default: 'John Doe' },
    age: { type: 'integer' as const, description: 'User age', default: 30 },
    score: { type: 'number' as const, description: 'User score', default: 95.5 },
    status: { type: 'string' as const, description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean' as const, description: 'Verification status', default: true },
  },
  required: [],
};

export const enumsSchema = {
  type: 'object' as const,
  properties: {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Select one option with titles',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
};
