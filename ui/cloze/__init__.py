"""Parts of the Name cloze page (name cloze): the books chooser, run settings, template dialog, results."""
