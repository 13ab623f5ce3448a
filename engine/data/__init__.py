"""Images in: photos decoded within a pixel budget, ZIP members read with their checks, and the bundled CIFAR-10
subsets and training data."""
