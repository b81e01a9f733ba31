// The rich-text editor (TipTap on ProseMirror), loaded only when an editor
// shows a rich-text field: it is the heaviest part of the Studio.
import { Editor } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';

/**
 * Makes an editor in element with the HTML html, labelled label, calling
 * onchange(html) on every change ('' when empty) and ontransaction() when
 * the selection or marks change (for the toolbar's pressed states).
 */
export function createEditor(element, { html, label, editable, onchange, ontransaction }) {
  return new Editor({
    element,
    content: html || '',
    editable,
    // The Studio's CSP allows no inline styles: its style sheet has them.
    injectCSS: false,
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    editorProps: {
      attributes: { role: 'textbox', 'aria-multiline': 'true', 'aria-label': label },
    },
    onUpdate: ({ editor }) => onchange(editor.isEmpty ? '' : editor.getHTML()),
    onTransaction: () => ontransaction?.(),
  });
}
