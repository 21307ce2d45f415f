"""The problem file and what is derived from it the same way in both roles: loading and size
overrides, seeds, inputs and models, run precisions, generalisation variants, size estimates."""
