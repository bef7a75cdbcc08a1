// Candor's own lint rules (eslint.config.mjs turns them on). They read the
// types, so they know Candor's errors by what they are, not by their names:
// a class is Candor's error when KindError of src/core/kindError.ts is among
// its bases (docs/architecture.md, "Layout").
import * as path from 'node:path';

const KIND_ERROR_FILE = path.join('src', 'core', 'kindError.ts');

/** The class types `type` is built on, itself first (a generic instance stands for its class). */
function lineage(checker, type) {
  const seen = [];
  const pending = [type];
  while (pending.length > 0) {
    const next = pending.pop();
    const declared = next.target ?? next;
    if (seen.includes(declared)) continue;
    seen.push(declared);
    if (typeof declared.isClassOrInterface === 'function' && declared.isClassOrInterface()) pending.push(...checker.getBaseTypes(declared));
  }
  return seen;
}

function declaredIn(type, test) {
  return (type.symbol?.declarations ?? []).some((d) => test(d.getSourceFile()));
}

const isKindErrorClass = (type) => type.symbol?.name === 'KindError' && declaredIn(type, (file) => path.normalize(file.fileName).endsWith(KIND_ERROR_FILE));

/** The instance type a class node or a constructor value makes. */
function instanceType(checker, type) {
  const construct = type.getConstructSignatures();
  return construct.length > 0 ? construct[0].getReturnType() : type;
}

function typed(context) {
  const services = context.sourceCode.parserServices;
  if (services?.program === undefined || services.esTreeNodeToTSNodeMap === undefined) throw new Error('this rule needs type information (parserOptions.projectService)');
  const checker = services.program.getTypeChecker();
  const typeOf = (node) => instanceType(checker, checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node)));
  return { checker, program: services.program, typeOf };
}

/** `class X extends Error` (or any error class that is not KindError's). */
const errorBase = {
  meta: { type: 'problem', schema: [], messages: { base: "{{name}} extends {{base}}: Candor's errors extend KindError (src/core/kindError.ts), a kind for code and a message for people." } },
  create(context) {
    const { checker, program, typeOf } = typed(context);
    const isLibError = (type) => type.symbol?.name === 'Error' && declaredIn(type, (file) => program.isSourceFileDefaultLibrary(file));
    const check = (node) => {
      if (node.superClass === null || node.superClass === undefined) return;
      const bases = lineage(checker, typeOf(node)).slice(1);
      if (!bases.some(isLibError) || bases.some(isKindErrorClass)) return;
      context.report({ node: node.superClass, messageId: 'base', data: { name: node.id?.name ?? 'this class', base: context.sourceCode.getText(node.superClass) } });
    };
    return { ClassDeclaration: check, ClassExpression: check };
  },
};

/** `err instanceof GitHubError` on one of Candor's own errors. */
const kindTest = {
  meta: { type: 'problem', schema: [], messages: { kind: '`instanceof {{name}}` on one of Candor\'s errors: test it with isKindError (src/core/kindError.ts) or the guard beside the class.' } },
  create(context) {
    const { checker, typeOf } = typed(context);
    return {
      "BinaryExpression[operator='instanceof']"(node) {
        if (!lineage(checker, typeOf(node.right)).some(isKindErrorClass)) return;
        context.report({ node, messageId: 'kind', data: { name: context.sourceCode.getText(node.right) } });
      },
    };
  },
};

export const candorRules = { rules: { 'error-base': errorBase, 'kind-test': kindTest } };
