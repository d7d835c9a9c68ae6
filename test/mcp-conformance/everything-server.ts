// An MCP server that implements the server scenarios of the official conformance suite
// (@modelcontextprotocol/conformance 0.1.16: the tools, resources, prompts, logging, completion
// and SSE behaviour its scenarios ask for, written here from their descriptions and checks), so
// the suite can be run against it plain and fenced with `fenceMcpServer` (test/mcp-conformance/
// run.sh compares the two). Streamable HTTP with sessions on 127.0.0.1 (DNS rebinding
// protection on, as `createMcpExpressApp` does for loopback).
//
//   npx tsx --conditions=@toolfence/source test/mcp-conformance/everything-server.ts <mode>
//
// <mode>: plain | realistic | effectful | annotations (see `MODES`). Prints one line,
// `listening http://127.0.0.1:<port>/mcp` (a free port), once it accepts connections.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type EventStore,
  StreamableHTTPServerTransport,
} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type ListToolsResult,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { Guard, Idempotency, type IdempotencyPolicy, MemoryStore } from '@toolfence/core';
import { fenceMcpServer, type ToolHandlerExtra } from '@toolfence/mcp';
import type { Request, Response } from 'express';
import { z } from 'zod';

const IMAGE =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const READ_ONLY: IdempotencyPolicy = { kind: Idempotency.READ_ONLY };
const IDEMPOTENT: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };
const EFFECTFUL: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };

/** Each tool's policy as a careful author would set it: readers, repeatable work, effects. */
const REALISTIC: Record<string, IdempotencyPolicy> = {
  test_simple_text: READ_ONLY,
  test_image_content: READ_ONLY,
  test_audio_content: READ_ONLY,
  test_embedded_resource: READ_ONLY,
  test_multiple_content_types: READ_ONLY,
  json_schema_2020_12_tool: READ_ONLY,
  test_tool_with_logging: IDEMPOTENT,
  test_tool_with_progress: IDEMPOTENT,
  test_error_handling: IDEMPOTENT,
  test_reconnection: EFFECTFUL,
  test_sampling: EFFECTFUL,
  test_elicitation: EFFECTFUL,
  test_elicitation_sep1034_defaults: EFFECTFUL,
  test_elicitation_sep1330_enums: EFFECTFUL,
  // Not in the suite: for test/mcp-conformance/scenarios.test.ts.
  test_slow_progress: EFFECTFUL,
  test_url_elicitation_read_only: READ_ONLY,
  test_url_elicitation_idempotent: IDEMPOTENT,
  test_url_elicitation_effectful: EFFECTFUL,
};

/** The annotations a tool gets in the `annotations` mode (policies derived from them). */
function hintsOf(name: string): { readOnlyHint?: boolean; idempotentHint?: boolean } {
  const policy = REALISTIC[name];
  if (policy === READ_ONLY) return { readOnlyHint: true };
  if (policy === IDEMPOTENT) return { idempotentHint: true };
  return {};
}

/**
 * - plain: not fenced (the reference).
 * - realistic: `REALISTIC` policies.
 * - effectful: every tool EFFECTFUL.
 * - annotations: no policies; each tool carries the hints of its realistic policy and the server
 *   derives the policy from them (an unannotated tool is EFFECTFUL, the default).
 */
const MODES = ['plain', 'realistic', 'effectful', 'annotations'] as const;
type Mode = (typeof MODES)[number];

const mode = (process.argv[2] ?? 'plain') as Mode;
if (!MODES.includes(mode)) {
  process.stderr.write(`mode must be one of ${MODES.join(', ')}\n`);
  process.exit(2);
}

// One store for every session, as servers behind one Redis would share it.
const guard = new Guard({ store: new MemoryStore(), tenant: 'conformance' });

type Level = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

function createServer(): McpServer {
  const server = new McpServer(
    { name: 'toolfence-conformance-server', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  const annotated = (name: string) => (mode === 'annotations' ? { annotations: hintsOf(name) } : {});
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const log = (level: Level, data: string) =>
    server.server.notification({ method: 'notifications/message', params: { level, data } }).catch(() => {
      // No client connected: nothing to tell.
    });

  server.registerTool(
    'test_simple_text',
    { description: 'Tests simple text content response', ...annotated('test_simple_text') },
    async () => text('This is a simple text response for testing.'),
  );
  server.registerTool(
    'test_image_content',
    { description: 'Tests image content response', ...annotated('test_image_content') },
    async () => ({ content: [{ type: 'image', data: IMAGE, mimeType: 'image/png' }] }),
  );
  server.registerTool(
    'test_audio_content',
    { description: 'Tests audio content response', ...annotated('test_audio_content') },
    async () => ({ content: [{ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }] }),
  );
  server.registerTool(
    'test_embedded_resource',
    { description: 'Tests embedded resource content response', ...annotated('test_embedded_resource') },
    async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_multiple_content_types',
    {
      description: 'Tests response with multiple content types (text, image, resource)',
      ...annotated('test_multiple_content_types'),
    },
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: IMAGE, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_tool_with_logging',
    {
      description: 'Tests tool that emits log messages during execution',
      inputSchema: {},
      ...annotated('test_tool_with_logging'),
    },
    async (_args, extra) => {
      for (const [index, data] of [
        'Tool execution started',
        'Tool processing data',
        'Tool execution completed',
      ].entries()) {
        if (index > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
      }
      return text('Tool with logging executed successfully');
    },
  );
  server.registerTool(
    'test_tool_with_progress',
    {
      description: 'Tests tool that reports progress notifications',
      inputSchema: {},
      ...annotated('test_tool_with_progress'),
    },
    async (_args, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        });
      }
      return text(String(progressToken));
    },
  );
  server.registerTool(
    'test_error_handling',
    { description: 'Tests error response handling', ...annotated('test_error_handling') },
    async () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
  );
  server.registerTool(
    'test_reconnection',
    {
      description:
        'Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the stream mid-call and sends the result after the client reconnects.',
      inputSchema: {},
      ...annotated('test_reconnection'),
    },
    async (_args, extra) => {
      const transport = extra.sessionId === undefined ? undefined : transports.get(extra.sessionId);
      transport?.closeSSEStream(extra.requestId);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return text(
        'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
      );
    },
  );
  server.registerTool(
    'test_sampling',
    {
      description: 'Tests server-initiated sampling (LLM completion request)',
      inputSchema: { prompt: z.string().describe('The prompt to send to the LLM') },
      ...annotated('test_sampling'),
    },
    async ({ prompt }, extra) => {
      try {
        const result = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
          },
          CreateMessageResultSchema,
        );
        return text(`LLM response: ${result.content.type === 'text' ? result.content.text : 'No response'}`);
      } catch (error) {
        return text(`Sampling not supported or error: ${(error as Error).message}`);
      }
    },
  );
  const elicit = async (
    extra: ToolHandlerExtra,
    message: string,
    requestedSchema: Record<string, unknown>,
    prefix: string,
  ) => {
    try {
      const result = await extra.sendRequest(
        { method: 'elicitation/create', params: { message, requestedSchema } as never },
        ElicitResultSchema,
      );
      return text(`${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    } catch (error) {
      return text(`Elicitation not supported or error: ${(error as Error).message}`);
    }
  };
  server.registerTool(
    'test_elicitation',
    {
      description: 'Tests server-initiated elicitation (user input request)',
      inputSchema: { message: z.string().describe('The message to show the user') },
      ...annotated('test_elicitation'),
    },
    async ({ message }, extra) =>
      elicit(
        extra,
        message,
        {
          type: 'object',
          properties: { response: { type: 'string', description: "User's response" } },
          required: ['response'],
        },
        'User response',
      ),
  );
  server.registerTool(
    'test_elicitation_sep1034_defaults',
    {
      description: 'Tests elicitation with default values per SEP-1034',
      inputSchema: {},
      ...annotated('test_elicitation_sep1034_defaults'),
    },
    async (_args, extra) =>
      elicit(
        extra,
        'Please review and update the form fields with defaults',
        {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
        'Elicitation completed',
      ),
  );
  server.registerTool(
    'test_elicitation_sep1330_enums',
    {
      description: 'Tests elicitation with enum schema improvements per SEP-1330',
      inputSchema: {},
      ...annotated('test_elicitation_sep1330_enums'),
    },
    async (_args, extra) =>
      elicit(
        extra,
        'Please select options from the enum fields',
        {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Select one option',
              enum: ['option1', 'option2', 'option3'],
            },
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
        },
        'Elicitation completed',
      ),
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
      inputSchema: {
        name: z.string().optional(),
        address: z.object({ street: z.string().optional(), city: z.string().optional() }).optional(),
      },
      ...annotated('json_schema_2020_12_tool'),
    },
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );

  // Not in the suite (test/mcp-conformance/scenarios.test.ts). A slow tool that reports progress
  // every 250 ms and counts its runs, for a duplicate sent while it runs.
  server.registerTool(
    'test_slow_progress',
    {
      description: 'Runs for `ms` milliseconds, reporting progress every 250 ms',
      inputSchema: { ms: z.number().int().positive() },
      ...annotated('test_slow_progress'),
    },
    async ({ ms }, extra) => {
      runs.slow += 1;
      const run = runs.slow;
      const token = extra._meta?.progressToken;
      for (let elapsed = 250; elapsed <= ms; elapsed += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: elapsed, total: ms },
          });
        }
      }
      return text(`done (run ${run})`);
    },
  );
  // Not in the suite: URL-mode elicitation (-32042) until the user opened the URL, then one link
  // per run; one tool per kind of policy.
  for (const kind of ['read_only', 'idempotent', 'effectful'] as const) {
    const name = `test_url_elicitation_${kind}`;
    server.registerTool(
      name,
      {
        description: 'Asks the user to authorise at a URL (-32042) before it links the account',
        inputSchema: { account: z.string() },
        ...annotated(name),
      },
      async ({ account }) => {
        const id = `${name}:${account}`;
        if (!authorised.has(id)) {
          throw new UrlElicitationRequiredError([
            {
              mode: 'url',
              elicitationId: id,
              url: `${baseUrl}/authorise?id=${encodeURIComponent(id)}`,
              message: `Authorise linking ${account}`,
            },
          ]);
        }
        const links = (runs.links.get(id) ?? 0) + 1;
        runs.links.set(id, links);
        return text(`linked ${account} (#${links})`);
      },
    );
  }

  server.registerResource(
    'static-text',
    'test://static-text',
    {
      title: 'Static Text Resource',
      description: 'A static text resource for testing',
      mimeType: 'text/plain',
    },
    async () => ({
      contents: [
        {
          uri: 'test://static-text',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    {
      title: 'Static Binary Resource',
      description: 'A static binary resource (image)',
      mimeType: 'image/png',
    },
    async () => ({ contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: IMAGE }] }),
  );
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    {
      title: 'Resource Template',
      description: 'A resource template with parameter substitution',
      mimeType: 'application/json',
    },
    async (uri, { id }) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { title: 'Watched Resource', description: 'A resource one can subscribe to', mimeType: 'text/plain' },
    async () => ({
      contents: [
        { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' },
      ],
    }),
  );
  const subscriptions = new Set<string>();
  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/subscribe'), params: z.object({ uri: z.string() }) }),
    async (request) => {
      subscriptions.add(request.params.uri);
      void log('info', `Subscribed to resource: ${request.params.uri}`);
      return {};
    },
  );
  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/unsubscribe'), params: z.object({ uri: z.string() }) }),
    async (request) => {
      subscriptions.delete(request.params.uri);
      void log('info', `Unsubscribed from resource: ${request.params.uri}`);
      return {};
    },
  );

  server.registerPrompt(
    'test_simple_prompt',
    { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
    async () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      argsSchema: {
        arg1: z.string().describe('First test argument'),
        arg2: z.string().describe('Second test argument'),
      },
    },
    async ({ arg1, arg2 }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') },
    },
    async ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_image',
    { title: 'Prompt With Image', description: 'A prompt that includes image content' },
    async () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: IMAGE, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    }),
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal('logging/setLevel'), params: z.object({ level: z.string() }) }),
    async (request) => {
      void log('info', `Log level set to: ${request.params.level}`);
      return {};
    },
  );
  server.server.setRequestHandler(z.object({ method: z.literal('completion/complete') }), async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));

  // SEP-1613: tools/list answers the raw JSON Schema 2020-12 of json_schema_2020_12_tool ($schema,
  // $defs, additionalProperties), which the SDK's zod conversion does not keep; the others as
  // the SDK lists them.
  // The SDK's own tools/list handler (private: kept to list every other tool as the SDK does).
  type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const listTools = handlers.get('tools/list');
  server.server.setRequestHandler(
    ListToolsRequestSchema,
    async (request, extra): Promise<ListToolsResult> => {
      const listed = (await listTools?.(request, extra)) as ListToolsResult;
      return {
        ...listed,
        tools: listed.tools.map((tool) =>
          tool.name === 'json_schema_2020_12_tool'
            ? {
                name: tool.name,
                description: tool.description,
                inputSchema: {
                  $schema: 'https://json-schema.org/draft/2020-12/schema',
                  type: 'object',
                  $defs: {
                    address: {
                      type: 'object',
                      properties: { street: { type: 'string' }, city: { type: 'string' } },
                    },
                  },
                  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
                  additionalProperties: false,
                },
              }
            : tool,
        ),
      };
    },
  );

  if (mode === 'realistic') fenceMcpServer(server, { guard, policies: REALISTIC });
  if (mode === 'effectful') {
    fenceMcpServer(server, {
      guard,
      policies: Object.fromEntries(Object.keys(REALISTIC).map((name) => [name, EFFECTFUL])),
    });
  }
  if (mode === 'annotations') fenceMcpServer(server, { guard });
  return server;
}

/** SEP-1699 resumability: events kept per stream, replayed after a client's Last-Event-ID. */
function eventStore(): EventStore {
  const events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  let counter = 0;
  return {
    async storeEvent(streamId, message) {
      counter += 1;
      const eventId = `${streamId}::${String(counter).padStart(10, '0')}`;
      events.set(eventId, { streamId, message });
      return eventId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = lastEventId.split('::')[0] ?? '';
      for (const [eventId, event] of events) {
        if (event.streamId === streamId && eventId > lastEventId && Object.keys(event.message).length > 0) {
          await send(eventId, event.message);
        }
      }
      return streamId;
    },
  };
}

const transports = new Map<string, StreamableHTTPServerTransport>();
/** Runs of the scenario tools, across sessions. */
const runs = { slow: 0, links: new Map<string, number>() };
/** The elicitation ids whose URL the user opened. */
const authorised = new Set<string>();
let baseUrl = '';
const app = createMcpExpressApp();

// The page of a URL-mode elicitation: opening it authorises.
app.get('/authorise', (request: Request, response: Response) => {
  authorised.add(String(request.query.id));
  response.type('text/plain').send('authorised');
});

app.post('/mcp', async (request: Request, response: Response) => {
  const sessionId = request.headers['mcp-session-id'];
  let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
  if (transport === undefined) {
    if (
      sessionId !== undefined ||
      (request.body as { method?: unknown } | undefined)?.method !== 'initialize'
    ) {
      response.status(400).json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Invalid or missing session ID' },
        id: null,
      });
      return;
    }
    const server = createServer();
    const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: eventStore(),
      retryInterval: 5_000,
      onsessioninitialized: (id) => {
        transports.set(id, created);
      },
    });
    created.onclose = () => {
      if (created.sessionId !== undefined) transports.delete(created.sessionId);
      void server.close();
    };
    await server.connect(created);
    transport = created;
  }
  await transport.handleRequest(request, response, request.body);
});

for (const method of ['get', 'delete'] as const) {
  app[method]('/mcp', async (request: Request, response: Response) => {
    const sessionId = request.headers['mcp-session-id'];
    const transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      response.status(400).send('Invalid or missing session ID');
      return;
    }
    await transport.handleRequest(request, response);
  });
}

const listener = app.listen(0, '127.0.0.1', () => {
  const { port } = listener.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
});
