"""The spec: YAML in, typed and validated objects out, and its JSON Schema. No TensorFlow here."""
