"""Training the paper's CIFAR-10 family (`python -m engine.training.train`) and recording its trajectories."""
