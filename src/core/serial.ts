/** One job at a time, in the order asked; a failure does not stop the next (a view's refreshes and commands, an MCP server's starts). */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(job);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
