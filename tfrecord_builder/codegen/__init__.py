"""The generated input module: its text (render.py, pure) and the file it is written to
(module_file.py: a file, a folder or a URL, whole or not at all)."""
