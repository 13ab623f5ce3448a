"""The back end, free of page code: the models' service (service.py: models cached, analyses run where the server
runs model work), the AlterNet runs over it (cifar_lab.py) and the names of a model's units (units.py)."""
