"""Pure rendering of stored results: figures, maps, drawings and texts. Nothing here runs a model."""
