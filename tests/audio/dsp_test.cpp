// placeholder: filled in by the audio work
