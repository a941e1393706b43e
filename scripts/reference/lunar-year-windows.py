#!/usr/bin/env python3
"""Writes the reference days for astrology's lunar-year test: every day from 1900-01-01 to 2100-12-31 whose lunar year
(it starts at the lunar new year) differs from its Li Chun year (it starts at Li Chun, about 4 February), with both
years' stem-branch, as lunar-python (PyPI `lunar_python`, an independent Chinese calendar library) gives them.

  python3 scripts/reference/lunar-year-windows.py > Services/Astrology/Tests/AstrologyServiceTests/Reference/lunar-year-windows.tsv

Installs lunar_python from PyPI when it is missing. Columns: date, lunar year's stem-branch (pinyin, e.g. Geng-Wu),
Li Chun year's stem-branch; days where the two agree are left out.
"""
import datetime
import subprocess
import sys

try:
    from lunar_python import Solar
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "lunar_python"], check=True)
    from lunar_python import Solar

STEMS = dict(zip("甲乙丙丁戊己庚辛壬癸", ["Jia", "Yi", "Bing", "Ding", "Wu", "Ji", "Geng", "Xin", "Ren", "Gui"]))
BRANCHES = dict(zip("子丑寅卯辰巳午未申酉戌亥", ["Zi", "Chou", "Yin", "Mao", "Chen", "Si", "Wu", "Wei", "Shen", "You", "Xu", "Hai"]))


def pinyin(ganzhi):
    return f"{STEMS[ganzhi[0]]}-{BRANCHES[ganzhi[1]]}"


day, last = datetime.date(1900, 1, 1), datetime.date(2100, 12, 31)
print("# date\tlunar_year\tli_chun_year\t(lunar_python, scripts/reference/lunar-year-windows.py)")
while day <= last:
    lunar = Solar.fromYmd(day.year, day.month, day.day).getLunar()
    by_lunar, by_li_chun = lunar.getYearInGanZhi(), lunar.getYearInGanZhiByLiChun()
    if by_lunar != by_li_chun:
        print(f"{day.isoformat()}\t{pinyin(by_lunar)}\t{pinyin(by_li_chun)}")
    day += datetime.timedelta(days=1)
