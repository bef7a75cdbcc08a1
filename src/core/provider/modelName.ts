/**
 * How a model is named where room is short (the chat header, Select Model,
 * the gauge's tooltip): the server's alias when it lists one, the file's base
 * name when the id is a path (llama.cpp names a model by the path it was
 * loaded from), else the id as it is. The full id stays in the tooltips, the
 * settings and every data file.
 */
export function shortModelName(id: string, aliases: readonly string[] = []): string {
  const alias = aliases
    .filter((a) => a.trim() !== '' && a !== id && !isModelFilePath(a))
    .sort((a, b) => a.length - b.length)[0];
  if (alias !== undefined) return alias;
  return isModelFilePath(id) ? baseName(id) : id;
}

/** Extensions of model files: a relative id with one of these and a separator is a path, not `org/name`. */
const MODEL_FILE = /\.(?:gguf|ggml|bin|safetensors|pt|pth|onnx|llamafile)$/i;

/**
 * Whether a model id is a file path: absolute (`/…`, `~/…`, `C:\…`, `\\server\…`),
 * explicitly relative (`./…`, `../…`), or a relative path to a model file
 * (`models/tiny.gguf`). A hub id such as `meta-llama/Llama-3.1-8B` is not.
 */
export function isModelFilePath(id: string): boolean {
  if (/^(?:\/|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\]|\\\\)/.test(id)) return true;
  return /[/\\]/.test(id) && MODEL_FILE.test(id);
}

function baseName(path: string): string {
  const parts = path.split(/[/\\]+/).filter((p) => p !== '');
  return parts[parts.length - 1] ?? path;
}
