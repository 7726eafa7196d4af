/**
 * The shape of a JSON Schema and of a TypeScript type in one comparable form, so that a test can
 * hold `schema/*.schema.json` and the harness's hand-written models to each other. A shape is a
 * sorted list of lines: one per property, `case.providers?[].tools{}.delay?` (`?` optional, `[]`
 * an array's items, `{}` a record's values), and one per closed set of values,
 * `case.providers?[].tools{}.as? = "ArrayBuffer" | "Uint8Array"`. A union (oneOf, anyOf, `|`)
 * contributes every branch's properties, required only where every object branch requires them,
 * and a line naming its object branches by the fields each requires: `… one of {any} {match}`.
 * A definition met again inside itself (a delay's `then`) is not walked twice.
 */
import ts from 'typescript';

type Schema = Record<string, unknown>;

/** What a union contributes at one path: object branches, array items, record values, literals. */
interface Parts<T> {
  objects: Array<{ properties: Map<string, T[]>; required: Set<string> }>;
  items: T[];
  values: T[];
  literals: Set<string>;
  /** A branch takes any value (or any object): nothing beneath is a closed contract, so nothing is compared. */
  open: boolean;
}

const emptyParts = <T>(): Parts<T> => ({ objects: [], items: [], values: [], literals: new Set(), open: false });

/** Writes the lines for `parts` at `path`, walking each child with `walk`. */
function emit<T>(path: string, parts: Parts<T>, lines: Set<string>, walk: (child: T, path: string) => void): void {
  if (parts.open) return;
  if (parts.literals.size) lines.add(`${path} = ${[...parts.literals].sort().join(' | ')}`);
  for (const item of parts.items) walk(item, `${path}[]`);
  for (const value of parts.values) walk(value, `${path}{}`);
  // A union's branches, each by the fields it requires: a field optional in one branch only is seen here.
  const branches = new Set(parts.objects.map((object) => `{${[...object.required].sort().join(', ')}}`));
  if (branches.size > 1) lines.add(`${path} one of ${[...branches].sort().join(' ')}`);
  const names = new Set(parts.objects.flatMap((object) => [...object.properties.keys()]));
  for (const name of names) {
    const required = parts.objects.every((object) => object.required.has(name));
    const childPath = `${path ? `${path}.` : ''}${name}${required ? '' : '?'}`;
    lines.add(childPath);
    for (const object of parts.objects) for (const child of object.properties.get(name) ?? []) walk(child, childPath);
  }
}

/** The shape of `$defs[name]` in `schema`, its paths starting with `name`. */
export function schemaShape(schema: Schema, name: string): string[] {
  const defs = (schema.$defs ?? {}) as Record<string, Schema>;
  const lines = new Set<string>();
  const walk = (node: Schema, path: string, entered: readonly string[]): void => {
    const parts = emptyParts<{ node: Schema; entered: readonly string[] }>();
    collect(node, entered, parts);
    emit(path, parts, lines, (child, childPath) => walk(child.node, childPath, child.entered));
  };
  const collect = (
    node: Schema,
    entered: readonly string[],
    parts: Parts<{ node: Schema; entered: readonly string[] }>,
  ): void => {
    if (typeof node.$ref === 'string') {
      const target = node.$ref.replace('#/$defs/', '');
      if (!entered.includes(target)) collect(defs[target] as Schema, [...entered, target], parts);
      return;
    }
    const at = (child: unknown) => ({ node: child as Schema, entered });
    const constrained = ['properties', 'required', 'items', 'additionalProperties', 'oneOf', 'anyOf', 'const', 'enum'];
    const types = [node.type].flat();
    if (
      !constrained.some((key) => key in node) &&
      types.every((type) => [undefined, 'object', 'array'].includes(type as string))
    )
      parts.open = true;
    if ('const' in node) parts.literals.add(JSON.stringify(node.const));
    for (const value of (node.enum as unknown[] | undefined) ?? []) parts.literals.add(JSON.stringify(value));
    if (types.includes('boolean')) for (const value of [true, false]) parts.literals.add(JSON.stringify(value));
    if (node.items) parts.items.push(at(node.items));
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      parts.values.push(at(node.additionalProperties));
    const own = node.properties || node.required;
    const base = {
      properties: new Map(Object.entries((node.properties ?? {}) as Schema).map(([key, child]) => [key, [at(child)]])),
      required: new Set((node.required as string[] | undefined) ?? []),
    };
    const union = [...((node.oneOf as Schema[] | undefined) ?? []), ...((node.anyOf as Schema[] | undefined) ?? [])];
    if (!union.length) {
      if (own) parts.objects.push(base);
      return;
    }
    for (const branch of union) {
      const inner = emptyParts<{ node: Schema; entered: readonly string[] }>();
      collect(branch, entered, inner);
      parts.items.push(...inner.items);
      parts.values.push(...inner.values);
      for (const literal of inner.literals) parts.literals.add(literal);
      parts.open ||= inner.open;
      // A branch of a node with properties of its own narrows those properties (oneOf: required).
      for (const object of inner.objects)
        parts.objects.push({
          properties: new Map([...base.properties, ...object.properties]),
          required: new Set([...base.required, ...object.required]),
        });
    }
  };
  walk({ $ref: `#/$defs/${name}` }, name, []);
  return [...lines].sort();
}

const programs = new Map<string, ts.Program>();

/** One program per set of files: building one reads the standard library, which takes a second or more. */
function programOf(files: readonly string[]): ts.Program {
  const key = files.join('\n');
  let program = programs.get(key);
  if (!program) {
    program = ts.createProgram([...files], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    });
    programs.set(key, program);
  }
  return program;
}

/** The shape of the type or interface `name` declared in one of `files`, its paths starting with `root`. */
export function typeShape(files: readonly string[], name: string, root: string): string[] {
  const program = programOf(files);
  const checker = program.getTypeChecker();
  const declaration = files
    .flatMap((file) => program.getSourceFile(file)?.statements ?? [])
    .find(
      (statement): statement is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && statement.name.text === name,
    );
  if (!declaration) throw new Error(`no type ${name} in ${files.join(', ')}`);
  const lines = new Set<string>();
  const walk = (type: ts.Type, path: string, entered: readonly ts.Type[]): void => {
    if (entered.includes(type)) return;
    const parts = emptyParts<ts.Type>();
    for (const member of type.isUnion() ? type.types : [type]) {
      if (member.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any | ts.TypeFlags.NonPrimitive)) parts.open = true;
      else if (member.flags & ts.TypeFlags.BooleanLiteral) parts.literals.add(checker.typeToString(member));
      else if (member.isStringLiteral() || member.isNumberLiteral()) parts.literals.add(JSON.stringify(member.value));
      else if (checker.isArrayType(member)) parts.items.push(...checker.getTypeArguments(member as ts.TypeReference));
      else if (member.flags & ts.TypeFlags.Object || member.isIntersection()) {
        const index = checker.getIndexInfoOfType(member, ts.IndexKind.String);
        if (index) parts.values.push(index.type);
        const properties = checker.getPropertiesOfType(member);
        if (index && !properties.length) continue;
        parts.objects.push({
          properties: new Map(
            properties.map((symbol) => [symbol.name, [checker.getNonNullableType(checker.getTypeOfSymbol(symbol))]]),
          ),
          required: new Set(
            properties.filter((symbol) => !(symbol.flags & ts.SymbolFlags.Optional)).map((symbol) => symbol.name),
          ),
        });
      }
    }
    emit(path, parts, lines, (child, childPath) => walk(child, childPath, [...entered, type]));
  };
  walk(checker.getTypeAtLocation(declaration.name), root, []);
  return [...lines].sort();
}
