// A Svelte action that makes a list's children draggable with SortableJS
// (mouse, touch) and reports the new order; keyboard users get Move up and
// Move down buttons beside each entry instead (the screens add them).
import Sortable from 'sortablejs';

/**
 * use:sortable={{ onSort(ids, move), group, handle }}: ids are the data-id
 * attributes of the list's children in their new order; move tells what
 * moved where: {id, from, to, toIds, newIndex} (from and to are the lists'
 * data-list attributes, toIds the target list's ids in its new order).
 */
export function sortable(node, opts) {
  let current = opts;
  const s = Sortable.create(node, {
    animation: 120,
    handle: opts.handle,
    group: opts.group,
    dataIdAttr: 'data-id',
    onEnd(e) {
      const ids = s.toArray();
      const move = {
        id: e.item.dataset.id,
        from: e.from.dataset.list,
        to: e.to.dataset.list,
        toIds: [...e.to.children].map((c) => c.dataset.id).filter(Boolean),
        newIndex: e.newIndex,
      };
      // Put the DOM back as it was: the screen changes its list, and
      // Svelte redraws it in the new order.
      const back = e.from === e.to ? e.oldIndex + (e.oldIndex > e.newIndex ? 1 : 0) : e.oldIndex;
      e.from.insertBefore(e.item, e.from.children[back] ?? null);
      if (e.from !== e.to || e.oldIndex !== e.newIndex) current.onSort?.(ids, move);
    },
  });
  return {
    update(next) {
      current = next;
    },
    destroy() {
      s.destroy();
    },
  };
}

/** Moves the entry at index i of list by delta, returning a new array. */
export function moved(list, i, delta) {
  const j = i + delta;
  if (j < 0 || j >= list.length) return list;
  const out = [...list];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}
