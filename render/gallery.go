package render

import "strconv"

// gallery renders GET /gallery/{galleryID}: {galleryID, name, description,
// count, media: [{mediaID, fileName, url, size, modifiedOn, metaData}]},
// the media in the gallery's order. metaData holds Title (the asset's
// label), Description and LinkUrl (empty), and pixelHeight and pixelWidth
// as strings, as the v1 shape writes numbers. Galleries have no locale and
// no workflow, so both flavours answer the same.
func (j *job) gallery() error {
	g, err := j.r.reads.Gallery(j.ctx, j.inst, j.req.GalleryID)
	if err != nil {
		return err
	}
	w := &j.w
	w.open('{')
	w.key("galleryID")
	w.int(g.ID)
	w.key("name")
	w.str(g.Name)
	w.key("description")
	w.str(g.Description)
	w.key("count")
	w.int(int64(g.Count))
	w.key("media")
	w.open('[')
	for _, a := range g.Media {
		w.open('{')
		w.key("mediaID")
		w.int(a.ID)
		w.key("fileName")
		w.str(a.FileName)
		w.key("url")
		w.str(a.URL)
		w.key("size")
		w.int(a.Size)
		w.key("modifiedOn")
		w.modified(a.Modified)
		w.key("metaData")
		w.open('{')
		w.key("Title")
		w.str(a.Label)
		w.key("Description")
		w.str("")
		w.key("LinkUrl")
		w.str("")
		w.key("pixelHeight")
		w.str(strconv.Itoa(a.Height))
		w.key("pixelWidth")
		w.str(strconv.Itoa(a.Width))
		w.close('}')
		w.close('}')
	}
	w.close(']')
	w.close('}')
	return nil
}
