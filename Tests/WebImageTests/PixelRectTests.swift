import Testing
@testable import WebImage

@Suite struct PixelRectTests {
    @Test func overlappingRectanglesIntersect() {
        let a = PixelRect(x: 0, y: 0, width: 10, height: 8)
        let b = PixelRect(x: 4, y: 5, width: 20, height: 20)
        #expect(a.intersection(b) == PixelRect(x: 4, y: 5, width: 6, height: 3))
        #expect(b.intersection(a) == PixelRect(x: 4, y: 5, width: 6, height: 3))
    }

    @Test func aContainedRectangleIsItsOwnIntersection() {
        let outer = PixelRect(x: -5, y: -5, width: 100, height: 100)
        let inner = PixelRect(x: 3, y: 7, width: 2, height: 9)
        #expect(outer.intersection(inner) == inner)
        #expect(inner.intersection(outer) == inner)
        #expect(inner.intersection(inner) == inner)
    }

    @Test func negativeOriginsAreClipped() {
        let image = PixelRect(x: 0, y: 0, width: 30, height: 20)
        #expect(PixelRect(x: -5, y: -3, width: 10, height: 8).intersection(image) == PixelRect(x: 0, y: 0, width: 5, height: 5))
    }

    @Test(arguments: [
        PixelRect(x: 10, y: 0, width: 5, height: 5),    // touches the right edge
        PixelRect(x: 0, y: 10, width: 5, height: 5),    // touches the bottom edge
        PixelRect(x: -5, y: 0, width: 5, height: 5),    // touches the left edge
        PixelRect(x: 50, y: 50, width: 5, height: 5),   // far away
        PixelRect(x: 2, y: 2, width: 0, height: 5),     // empty itself
        PixelRect(x: 2, y: 2, width: 3, height: -1),    // negative height
    ])
    func disjointRectanglesGiveAnEmptyIntersection(other: PixelRect) {
        let rect = PixelRect(x: 0, y: 0, width: 10, height: 10)
        let intersection = rect.intersection(other)
        #expect(intersection.isEmpty)
        #expect(intersection.width == 0 && intersection.height == 0)
        #expect(other.intersection(rect).isEmpty)
    }

    @Test func isEmpty() {
        #expect(PixelRect(x: 0, y: 0, width: 0, height: 5).isEmpty)
        #expect(PixelRect(x: 0, y: 0, width: 5, height: 0).isEmpty)
        #expect(PixelRect(x: 0, y: 0, width: -1, height: 5).isEmpty)
        #expect(PixelRect(x: 0, y: 0, width: 5, height: -3).isEmpty)
        #expect(!PixelRect(x: -10, y: -10, width: 1, height: 1).isEmpty)
        #expect(!PixelRect(x: 0, y: 0, width: 5, height: 5).isEmpty)
    }

    @Test func sizeAndDescription() {
        let rect = PixelRect(x: 10, y: 20, width: 100, height: 50)
        #expect(rect.description == "10,20,100x50")
        #expect("\(PixelRect(x: -3, y: 0, width: 1, height: 2))" == "-3,0,1x2")
        #expect(rect.size == PixelSize(width: 100, height: 50))
    }

    @Test func hugeRectanglesDoNotTrap() {
        let image = PixelRect(x: 0, y: 0, width: 30, height: 20)
        // Far away in both directions: empty, and computing it must not overflow.
        #expect(PixelRect(x: .max, y: .max, width: .max, height: .max).intersection(image).isEmpty)
        #expect(PixelRect(x: .min, y: .min, width: 1, height: 1).intersection(image).isEmpty)
    }

    @Test func aRectangleReachingPastIntMaxStillCoversTheImage() {
        // From (10, 5) with the largest possible size, the rectangle covers everything right of and below
        // (10, 5), so the intersection with a 30x20 image is 20x15 from (10, 5), although x + width overflows.
        let image = PixelRect(x: 0, y: 0, width: 30, height: 20)
        let huge = PixelRect(x: 10, y: 5, width: .max, height: .max)
        #expect(huge.intersection(image) == PixelRect(x: 10, y: 5, width: 20, height: 15))
    }
}
