"""Catalog readers (attribute table, Fashion styles.csv, Stanford Cars) and the attribute renderer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.schema import schema_for
from triad_dataset.sources.catalog import parse_car_class, read_attribute_table, read_fashion_styles, read_stanford_cars
from triad_dataset.sources.render import render_item

HEADER = "item_id,product_id,image," + ",".join(schema_for("fashion").names)


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 4), (255, 0, 0)).save(path)


def _table(tmp_path: Path, rows: list[str], header: str = HEADER) -> Path:
    for name in ("a.png", "b.png"):
        _png(tmp_path / "img" / name)
    path = tmp_path / "items.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


GOOD = [
    "i1,p1,img/a.png,Dresses,Women,Aurora,v-neck,Navy Blue,floral,long,maxi,Casual,2012,Summer",
    "i2,p1,img/b.png,Skirts,Women,Birch,round,Red,solid,long,mini,Party,2013,Winter",
]


def test_attribute_table_reads_items(tmp_path: Path) -> None:
    catalog = read_attribute_table(_table(tmp_path, GOOD), "fashion")
    first, second = catalog.items
    assert (first.item_id, first.product_id, first.attributes["colour"]) == ("i1", "p1", "Navy Blue")
    assert second.attributes["sleeve_length"] == second.attributes["neckline"] == ""  # tops only: not skirts
    assert catalog.image_bytes(0)[:4] == b"\x89PNG"


def test_attribute_table_unknown_column(tmp_path: Path) -> None:
    path = _table(tmp_path, [GOOD[0] + ",x"], header=HEADER + ",fabric")
    with pytest.raises(TriadError, match=r"items\.csv: unknown column\(s\) \['fabric'\]"):
        read_attribute_table(path, "fashion")


def test_attribute_table_value_outside_the_schema_names_the_row(tmp_path: Path) -> None:
    path = _table(tmp_path, [GOOD[0], GOOD[1].replace("Red", "Reddish")])
    with pytest.raises(TriadError, match=r"items\.csv, row 3: colour value 'Reddish' is not in the fashion schema"):
        read_attribute_table(path, "fashion")


def test_attribute_table_missing_image(tmp_path: Path) -> None:
    path = _table(tmp_path, [GOOD[0].replace("img/a.png", "img/zz.png")])
    with pytest.raises(TriadError, match=r"row 2: image file .*zz\.png not found"):
        read_attribute_table(path, "fashion")


def test_attribute_table_missing_column_and_duplicate_id(tmp_path: Path) -> None:
    with pytest.raises(TriadError, match=r"missing column\(s\) \['season'\]"):
        read_attribute_table(_table(tmp_path, [GOOD[0].rsplit(",", 1)[0]], header=HEADER.rsplit(",", 1)[0]), "fashion")
    with pytest.raises(TriadError, match="duplicate item_id 'i1'"):
        read_attribute_table(_table(tmp_path, [GOOD[0], GOOD[0]]), "fashion")


STYLES = "id,gender,masterCategory,subCategory,articleType,baseColour,season,year,usage,productDisplayName"


def _styles(tmp_path: Path, rows: list[str], header: str = STYLES) -> Path:
    (tmp_path / "images").mkdir(exist_ok=True)
    for row in rows:
        _png(tmp_path / "images" / f"{row.split(',')[0]}.jpg")
    path = tmp_path / "styles.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_fashion_styles_reader_maps_columns(tmp_path: Path) -> None:
    rows = [
        "15970,Men,Apparel,Topwear,Shirts,Navy Blue,Fall,2011.0,Casual,Turtle Check Men Navy Blue Shirt",
        "15971,Men,Apparel,Topwear,Shirts,Navy Blue,Fall,2011,Casual,Turtle Check Men Navy Blue Shirt",
        "39386,Women,Apparel,Dress,Dresses,Red,Summer,2012,Party,Aurora Women Red Dress",
    ]
    (tmp_path / "ann.csv").write_text("id,pattern,sleeve_length,length\n15970,checked,long,\n39386,solid,short,midi\n")
    catalog = read_fashion_styles(_styles(tmp_path, rows), tmp_path / "images", annotations=tmp_path / "ann.csv")
    shirt, twin, dress = catalog.items
    assert shirt.attributes == {
        "category": "Shirts",
        "gender": "Men",
        "colour": "Navy Blue",
        "season": "Fall",
        "year": "2011",
        "usage": "Casual",
        "brand": "Turtle",
        "pattern": "checked",
        "sleeve_length": "long",
        "length": "",
        "neckline": "",
    }
    assert twin.attributes["pattern"] == ""  # not annotated: never a condition
    assert shirt.product_id == twin.product_id != dress.product_id  # same product, two photographs
    assert dress.attributes["length"] == "midi"


def test_fashion_styles_reader_errors(tmp_path: Path) -> None:
    with pytest.raises(TriadError, match=r"unknown column\(s\) \['price'\]"):
        read_fashion_styles(
            _styles(tmp_path, ["1,Men,A,B,Shirts,Red,Fall,2011,Casual,X,9"], STYLES + ",price"), tmp_path / "images"
        )
    path = _styles(tmp_path, ["1,Men,A,B,Shirts,Red,Fall,2011,Casual,X", "2,Men,A,B,Watches,Red,Fall,2011,Casual,Y"])
    with pytest.raises(TriadError, match=r"styles\.csv, row 3: category value 'Watches'"):
        read_fashion_styles(path, tmp_path / "images")
    assert read_fashion_styles(path, tmp_path / "images", skip_unsupported=True).skipped == 1
    (tmp_path / "images" / "1.jpg").unlink()
    with pytest.raises(TriadError, match=r"row 2: image file .*1\.jpg not found"):
        read_fashion_styles(path, tmp_path / "images", skip_unsupported=True)


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("AM General Hummer SUV 2000", ("AM General", "Hummer", "SUV", "2000")),
        ("Acura TL Type-S 2008", ("Acura", "TL Type-S", None, "2008")),
        ("Aston Martin V8 Vantage Convertible 2012", ("Aston Martin", "V8 Vantage", "Convertible", "2012")),
        ("Dodge Ram Pickup 3500 Crew Cab 2010", ("Dodge", "Ram Pickup 3500", "Cab", "2010")),
        ("Ford F-450 Super Duty Crew Cab 2012", ("Ford", "F-450 Super Duty", "Cab", "2012")),
        ("Ram C/V Cargo Van Minivan 2012", ("Ram", "C/V Cargo Van", "Minivan", "2012")),
    ],
)
def test_stanford_class_names(name: str, parsed: tuple) -> None:
    assert parse_car_class(name) == parsed


def test_stanford_cars_reader(tmp_path: Path) -> None:
    for name in ("00001.jpg", "00002.jpg"):
        _png(tmp_path / "cars_test" / name)
    table = tmp_path / "cars.csv"
    table.write_text(
        "image,class_name,colour,view,setting\n"
        "00001.jpg,AM General Hummer SUV 2000,black,front,street\n"
        "00002.jpg,Chevrolet Corvette ZR1 2012,red,side,showroom\n"
    )
    with pytest.raises(TriadError, match=r"row 3: class 'Chevrolet Corvette ZR1 2012' names no body type"):
        read_stanford_cars(table, tmp_path / "cars_test")
    table.write_text(
        "image,class_name,colour,view,setting,body_type\n"
        "00001.jpg,AM General Hummer SUV 2000,black,front,street,\n"
        "00002.jpg,Chevrolet Corvette ZR1 2012,red,side,showroom,Coupe\n"
    )
    hummer, corvette = read_stanford_cars(table, tmp_path / "cars_test").items
    assert hummer.attributes == {
        "body_type": "SUV",
        "colour": "black",
        "view": "front",
        "setting": "street",
        "brand": "AM General",
        "model": "Hummer",
        "year": "2000",
    }
    assert corvette.attributes["body_type"] == "Coupe" and corvette.item_id == "00002"
    table.write_text("image,class_name,colour,view,setting\n00001.jpg,AM General Hummer SUV 2000,black,top,street\n")
    with pytest.raises(TriadError, match="row 2: view value 'top' is not in the cars schema"):
        read_stanford_cars(table, tmp_path / "cars_test")


def _pixel(png: bytes, xy: tuple[int, int]) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(png)).convert("RGB").getpixel(xy)


DRESS = {"category": "Dresses", "colour": "Red", "pattern": "solid", "sleeve_length": "long", "length": "maxi"}


def test_rendered_fashion_attributes_are_visible() -> None:
    base = render_item("fashion", DRESS, 0)
    assert _pixel(base, (50, 50)) == (215, 25, 30)  # the red of the garment body
    assert _pixel(render_item("fashion", {**DRESS, "colour": "Green"}, 0), (50, 50)) == (30, 150, 50)
    sleeve = (26, 14 + 44)  # lower arm: covered by a long sleeve, bare with a short one
    assert _pixel(base, sleeve) != _pixel(render_item("fashion", {**DRESS, "sleeve_length": "short"}, 0), sleeve)
    hem = (64, 118)  # below a mini hem, inside a maxi one
    assert _pixel(base, hem) != _pixel(render_item("fashion", {**DRESS, "length": "mini"}, 0), hem)
    striped = render_item("fashion", {**DRESS, "pattern": "striped"}, 0)
    column = {_pixel(striped, (50, y)) for y in range(40, 60)}
    assert len(column) >= 2  # stripes alternate along a column


def test_rendered_car_attributes_are_visible() -> None:
    car = {"body_type": "Sedan", "colour": "red", "view": "side", "setting": "nature"}
    side = render_item("cars", car, 0)
    assert _pixel(side, (60, 84)) == (200, 20, 25)  # the body
    assert _pixel(side, (5, 125)) == (90, 160, 70)  # grass
    assert _pixel(render_item("cars", {**car, "setting": "showroom"}, 0), (5, 125)) != (90, 160, 70)
    views = {render_item("cars", {**car, "view": v}, 0) for v in schema_for("cars").attribute("view").values}
    assert len(views) == 5
    bodies = {render_item("cars", {**car, "body_type": b}, 0) for b in schema_for("cars").attribute("body_type").values}
    assert len(bodies) == 9
