"""The tool's version, recorded in dataset_info.json and in generated modules."""

__version__ = "0.3.0.dev0"  # 0.3: statistics merged task by task (build/plan.py); last bits of means may change
