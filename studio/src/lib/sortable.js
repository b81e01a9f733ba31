// A Svelte action that makes a list's children draggable with SortableJS
// (mouse, touch) and reports the new order; keyboard users get Move up and
// Move down buttons beside each entry instead (the screens add them).
import Sortable from 'sortablejs';

/**
 * use:sortable={{ onSort(ids, move), group, handle, options }}: ids are the data-id
 * attributes of the list's children in their new order; move tells what
 * moved where: {id, from, to, toIds, newIndex} (from and to are the lists'
 * data-list attributes, toIds the target list's ids in its new order);
 * options are more SortableJS options (nested lists need some).
 */
export function sortable(node, opts) {
  let current = opts;
  let next = null; // the node after the dragged one before the drag
  const s = Sortable.create(node, {
    animation: 120,
    handle: opts.handle,
    group: opts.group,
    dataIdAttr: 'data-id',
    ...opts.options,
    onStart(e) {
      next = e.item.nextSibling;
    },
    onEnd(e) {
      const ids = s.toArray();
      const move = {
        id: e.item.dataset.id,
        from: e.from.dataset.list,
        to: e.to.dataset.list,
        toIds: [...e.to.children].map((c) => c.dataset.id).filter(Boolean),
        newIndex: e.newIndex,
      };
      // Put the DOM back as it was, before the very node it was before
      // (Svelte's markers included): the screen changes its list, and
      // Svelte redraws it in the new order.
      e.from.insertBefore(e.item, next);
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
