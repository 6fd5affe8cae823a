/// An object an ``OpenAddressingTable`` can hold: it knows its key, and its type knows how the table hashes keys.
@usableFromInline
package protocol HashTableElement: AnyObject {
    associatedtype Key: Equatable

    /// The key the element is stored under. It must not change while the element is in a table.
    var key: Key { get }

    /// The hash the table files `key` under. Equal keys must have equal hashes; the table takes the low bits for
    /// a key's first slot, so they should be well spread. Need not be `hashValue`: a table of keys made of type
    /// pointers can mix the pointers for much less than SipHash costs.
    static func tableHash(of key: Key) -> Int
}
