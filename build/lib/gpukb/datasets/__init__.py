"""Dataset catalogs (EEG, person detection) checked against primary sources, and loaders for their file formats."""
