// placeholder: filled in by the rendering work (issue 13)
