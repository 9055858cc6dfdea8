/**
 * @module
 * The namespace sidebar: the cluster's namespaces, live, each a button that shows that
 * namespace (the first, all of them).
 */
export class NamespaceSidebar {
  readonly #list: HTMLUListElement;
  readonly #choose: (namespace: string) => void;

  constructor(list: HTMLUListElement, choose: (namespace: string) => void) {
    this.#list = list;
    this.#choose = choose;
    this.add("", "All namespaces");
  }

  add(name: string, label = name): void {
    if (this.#item(name)) return;
    const item = document.createElement("li");
    item.dataset.namespace = name;
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.addEventListener("click", () => this.#choose(name));
    item.append(button);
    const before = [...this.#list.children].find((li) => (li as HTMLElement).dataset.namespace !== "" && ((li as HTMLElement).dataset.namespace ?? "") > name);
    this.#list.insertBefore(item, name === "" ? this.#list.firstChild : (before ?? null));
  }

  /** Only "All namespaces", for another cluster's. */
  clear(): void {
    for (const li of [...this.#list.children]) if ((li as HTMLElement).dataset.namespace !== "") li.remove();
  }

  remove(name: string): void {
    this.#item(name)?.remove();
  }

  /** Whether "All namespaces" may be picked (the token may read the collection so). */
  allowAll(allowed: boolean): void {
    const all = this.#item("")?.querySelector("button");
    if (all) all.disabled = !allowed;
  }

  select(name: string): void {
    for (const li of this.#list.children) (li as HTMLElement).toggleAttribute("aria-current", (li as HTMLElement).dataset.namespace === name);
  }

  #item(name: string): HTMLElement | undefined {
    return [...this.#list.children].find((li) => (li as HTMLElement).dataset.namespace === name) as HTMLElement | undefined;
  }
}
