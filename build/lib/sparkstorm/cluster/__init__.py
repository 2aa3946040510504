"""The cluster control plane: the state store and, on top of it, nimbus and supervisors."""
