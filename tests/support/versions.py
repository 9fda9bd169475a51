"""Two versions of one table, as issue 27 met them: daily weather by station, re-exported with
one column converted (temperatures in °F instead of °C). Every row is the same record in both;
only `temperature` is written differently."""
from __future__ import annotations

import datetime
import random

STATIONS = ("KSEA", "KPDX", "KSFO", "KLAX", "KDEN", "KORD", "KBOS", "KJFK", "KMIA")
WEATHER = ("calm", "chilly", "rain", "snow", "sun")
NUM_ROWS = 3071


def weather_csv(fahrenheit: bool = False, rows: int = NUM_ROWS) -> str:
    """`station_date,temperature,wind,weather`: `rows` rows, station_date unique."""
    rng = random.Random(27)
    lines = ["station_date,temperature,wind,weather"]
    start = datetime.date(2023, 1, 1)
    for index in range(rows):
        station = STATIONS[index % len(STATIONS)]
        day = start + datetime.timedelta(days=index // len(STATIONS))
        celsius = round(rng.gauss(12, 8), 1)
        temperature = round(celsius * 9 / 5 + 32, 1) if fahrenheit else celsius
        lines.append(f"{station}_{day.isoformat()},{temperature},{round(rng.uniform(0, 30), 1)},{rng.choice(WEATHER)}")
    return "\n".join(lines) + "\n"
