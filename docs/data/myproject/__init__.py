"""An example project's package of custom checks (README, "Registering checks")."""
