"""Writes build/spoken_digits_audio/: the digits zero to nine spoken by Debian's speech synthesiser,
espeak-ng, in 11 voices (en+m1..m7, en+f1..f4), 3 speeds and 2 pitches (660 WAV files, 16-bit PCM
at 22050 Hz, about 25 MB: made on the machine, not committed), and clips.csv naming each file, its
digit, its voice and its split: two voices (TEST_VOICES, a male and a female one) are the test
split and never heard in training. `make demo` runs it when the folder is missing: `python data/make_spoken_digits.py [FOLDER]`."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "build", "spoken_digits_audio")
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
VOICES = [f"en+m{number}" for number in range(1, 8)] + [f"en+f{number}" for number in range(1, 5)]
SPEEDS = [120, 150, 180]  # words per minute
PITCHES = [35, 65]  # espeak-ng's 0-99 (50 is the voice's own)
TEST_VOICES = {"en+m3", "en+f2"}


def clips() -> list[tuple[str, list[str], str]]:
    """(file name, espeak-ng arguments, digit) of every clip."""
    made = []
    for voice in VOICES:
        for speed in SPEEDS:
            for pitch in PITCHES:
                for digit in DIGITS:
                    name = f"{digit}_{voice.replace('+', '_')}_s{speed}_p{pitch}.wav"
                    made.append((name, ["-v", voice, "-s", str(speed), "-p", str(pitch)], digit))
    return made


def main(out: str = OUT) -> int:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        print("espeak-ng is missing: `make demo` installs it (apt-get install espeak-ng)", file=sys.stderr)
        return 1
    folder = os.path.join(out, "clips")
    os.makedirs(folder, exist_ok=True)
    made = clips()

    def speak(clip: tuple[str, list[str], str]) -> None:
        name, arguments, digit = clip
        subprocess.run([espeak, *arguments, "-w", os.path.join(folder, name), digit], check=True)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(speak, made))
    with open(os.path.join(out, "clips.csv"), "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["path", "digit", "voice", "split"])
        for name, arguments, digit in made:
            voice = arguments[1]
            writer.writerow([f"clips/{name}", digit, voice, "test" if voice in TEST_VOICES else "train"])
    print(f"{len(made)} clips in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
