// The asset types the Studio offers to upload, as the origin accepts them
// (package media): images for image fields, and PDF documents as well in
// the media library.

/** The accept list of an image field's upload. */
export const IMAGE_TYPES = 'image/png,image/jpeg,image/gif,image/webp,image/avif,image/svg+xml';

/** The accept list of the media library's upload: images and PDF documents. */
export const FILE_TYPES = `${IMAGE_TYPES},application/pdf`;

/** The types the library's upload accepts, for people. */
export const FILE_TYPES_TEXT = 'PNG, JPEG, GIF, WebP, AVIF, SVG or PDF';

/** Whether a browser shows the asset as an image (a PDF is a file). */
export function isImage(asset) {
  return (asset?.contentType ?? '').startsWith('image/');
}

/** The short name of a file's type for its icon: "PDF". */
export function fileKind(asset) {
  const ext = (asset?.fileName ?? '').split('.').pop();
  if (asset?.contentType === 'application/pdf') return 'PDF';
  return ext && ext !== asset?.fileName ? ext.toUpperCase() : 'File';
}
