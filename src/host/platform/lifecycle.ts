import type * as vscode from 'vscode';

/** One owner for every disposable: registered things are disposed in reverse order. */
export class DisposableStore implements vscode.Disposable {
  private readonly items: vscode.Disposable[] = [];
  private disposed = false;

  add<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    this.disposed = true;
    while (this.items.length > 0) {
      try {
        this.items.pop()?.dispose();
      } catch {
        // One failing disposal must not keep the others alive.
      }
    }
  }
}

export abstract class Disposable implements vscode.Disposable {
  private readonly store = new DisposableStore();

  protected register<T extends vscode.Disposable>(item: T): T {
    return this.store.add(item);
  }

  dispose(): void {
    this.store.dispose();
  }
}
