"""The server side, free of page code: where model work runs (`work`: the model thread, or ZeroGPU's worker on a
Hugging Face Space) and the visitors' turns on the models (`turns`)."""
