// GitHub's OpenAPI description (@octokit/openapi) as the judge of every
// request the fake GitHub receives and every answer it gives. The 13 MB
// description is read once, on first use; only the schemas the operations
// below reach are compiled, each on first use.
import * as fs from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The operations the fake serves: the GitHub port's endpoints (src/core/github/types.ts). */
export const OPERATIONS = [
  { id: 'repos/get', method: 'GET', template: '/repos/{owner}/{repo}' },
  { id: 'repos/get-branch', method: 'GET', template: '/repos/{owner}/{repo}/branches/{branch}' },
  { id: 'pulls/list', method: 'GET', template: '/repos/{owner}/{repo}/pulls' },
  { id: 'pulls/create', method: 'POST', template: '/repos/{owner}/{repo}/pulls' },
  { id: 'checks/list-for-ref', method: 'GET', template: '/repos/{owner}/{repo}/commits/{ref}/check-runs' },
  { id: 'repos/get-combined-status-for-ref', method: 'GET', template: '/repos/{owner}/{repo}/commits/{ref}/status' },
] as const;

export type OperationId = (typeof OPERATIONS)[number]['id'];
type Operation = (typeof OPERATIONS)[number];

type Json = Record<string, unknown>;
interface Spec {
  readonly paths: Record<string, Record<string, Json>>;
  readonly components: { readonly schemas: Record<string, Json>; readonly responses: Record<string, Json>; readonly parameters: Record<string, Json>; readonly examples: Record<string, { value: unknown }> };
}

const SPEC_FILE = require.resolve('@octokit/openapi/generated/api.github.com.json');
const DOC_ID = 'github';

let spec: Spec | undefined;
let ajv: Ajv | undefined;
let paramAjv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function loadSpec(): Spec {
  spec ??= JSON.parse(fs.readFileSync(SPEC_FILE, 'utf8')) as Spec;
  return spec;
}

/** An example of the description, deep-copied: the fake's answers start from them. */
export function specExample(name: string): Json {
  const example = loadSpec().components.examples[name];
  if (example === undefined) throw new Error(`the OpenAPI description has no example ${name}`);
  return structuredClone(example.value) as Json;
}

/** The operation a request is for, with its path parameters decoded. */
export function matchOperation(method: string, pathname: string): { readonly op: Operation; readonly params: Record<string, string> } | undefined {
  const segments = pathname.split('/');
  for (const op of OPERATIONS) {
    if (op.method !== method) continue;
    const parts = op.template.split('/');
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const fits = parts.every((part, i) => {
      const segment = segments[i] ?? '';
      if (!part.startsWith('{')) return part === segment;
      if (segment === '') return false;
      params[part.slice(1, -1)] = decodeURIComponent(segment);
      return true;
    });
    if (fits) return { op, params };
  }
  return undefined;
}

/** What is wrong with a request for `op`: its path parameters, its query and its JSON body. */
export function requestProblems(op: Operation, params: Record<string, string>, query: Record<string, string>, body: unknown): string[] {
  const operation = operationOf(op);
  const problems = [
    ...check(`${op.id} path`, parameterValidator(op, 'path'), params),
    ...check(`${op.id} query`, parameterValidator(op, 'query'), { ...query }),
  ];
  const requestBody = resolve(operation.requestBody as Json | undefined, 'requestBodies');
  const schema = (requestBody?.content as Record<string, { schema?: Json }> | undefined)?.['application/json']?.schema;
  if (schema !== undefined) problems.push(...check(`${op.id} body`, validator(`${op.id} request`, schema), body));
  else if (body !== undefined) problems.push(`${op.id}: a body was sent to an operation that takes none`);
  return problems;
}

/**
 * What is wrong with an answer of `status` to `op`. A status the operation
 * does not describe is checked against GitHub's common error body when it
 * is an error (GitHub answers 401 and 429 to any operation), else refused.
 */
export function responseProblems(op: Operation, status: number, body: unknown): string[] {
  const schema = responseSchema(op, status);
  if (schema === undefined) return [`${op.id}: GitHub's description has no answer ${status}`];
  if (schema === 'no-body') return body === undefined ? [] : [`${op.id} ${status}: an answer that has no body had one`];
  return check(`${op.id} ${status}`, validator(`${op.id} ${status}`, schema), body);
}

function responseSchema(op: Operation, status: number): Json | 'no-body' | undefined {
  const responses = operationOf(op).responses as Record<string, Json>;
  const described = resolve(responses[String(status)], 'responses');
  if (described === undefined) return status >= 400 ? { $ref: '#/components/schemas/basic-error' } : undefined;
  const schema = (described.content as Record<string, { schema?: Json }> | undefined)?.['application/json']?.schema;
  return schema ?? 'no-body';
}

function operationOf(op: Operation): Json {
  const operation = loadSpec().paths[op.template]?.[op.method.toLowerCase()];
  if (operation === undefined || operation.operationId !== op.id) throw new Error(`the OpenAPI description has no ${op.method} ${op.template} (${op.id})`);
  return operation;
}

/** A `$ref` to `#/components/<kind>/<name>` replaced by what it names. */
function resolve(node: Json | undefined, kind: 'responses' | 'parameters' | 'requestBodies'): Json | undefined {
  const ref = node?.$ref;
  if (typeof ref !== 'string') return node;
  const name = ref.replace(`#/components/${kind}/`, '');
  return (loadSpec().components as unknown as Record<string, Record<string, Json>>)[kind]?.[name];
}

function check(what: string, validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 8).map((e) => `${what}: ${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

function validator(key: string, schema: Json): ValidateFunction {
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = schemas().compile(openApiToJsonSchema(schema) as Json);
    compiled.set(key, validate);
  }
  return validate;
}

/** Path or query parameters as one object schema; values arrive as strings, so types are coerced. */
function parameterValidator(op: Operation, where: 'path' | 'query'): ValidateFunction {
  const key = `${op.id} ${where}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    const parameters = ((operationOf(op).parameters ?? []) as Json[]).map((p) => resolve(p, 'parameters') as Json).filter((p) => p.in === where);
    const schema = {
      type: 'object',
      properties: Object.fromEntries(parameters.map((p) => [p.name, openApiToJsonSchema(p.schema)])),
      required: parameters.filter((p) => p.required === true).map((p) => p.name),
      additionalProperties: false,
    };
    paramAjv ??= new Ajv({ strict: false, allErrors: true, coerceTypes: true });
    validate = paramAjv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** One validator for every component schema the operations reach, added as one document. */
function schemas(): Ajv {
  if (ajv !== undefined) return ajv;
  const { components } = loadSpec();
  const reached = new Set<string>(['basic-error']);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const name = key === '$ref' && typeof value === 'string' ? /^#\/components\/(schemas|responses|parameters)\/(.+)$/.exec(value) : null;
      if (name?.[1] === 'schemas' && !reached.has(name[2] ?? '')) {
        reached.add(name[2] ?? '');
        visit(components.schemas[name[2] ?? '']);
      } else if (name) visit((components as unknown as Record<string, Record<string, unknown>>)[name[1] ?? '']?.[name[2] ?? '']);
      else visit(value);
    }
  };
  for (const op of OPERATIONS) visit(operationOf(op));
  [...reached].forEach((name) => visit(components.schemas[name]));
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // GitHub's own format: `owner/repo`.
  ajv.addFormat('repo.nwo', /^[^/\s]+\/[^/\s]+$/);
  const subset = Object.fromEntries([...reached].map((name) => [name, openApiToJsonSchema(components.schemas[name])]));
  ajv.addSchema({ $id: DOC_ID, components: { schemas: subset } });
  return ajv;
}

/**
 * OpenAPI 3.0's schema dialect as JSON Schema: `nullable: true` becomes
 * "this, or null", and every reference points into the one document of
 * component schemas.
 */
function openApiToJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openApiToJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === 'nullable' || key === 'example' || key === 'examples') continue;
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace(/^#\/components\/schemas\//, `${DOC_ID}#/components/schemas/`);
    else if (key === 'properties' && value !== null && typeof value === 'object') out.properties = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, openApiToJsonSchema(schema)]));
    else out[key] = openApiToJsonSchema(value);
  }
  return (node as Json).nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}
