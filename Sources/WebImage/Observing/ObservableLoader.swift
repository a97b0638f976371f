/// A built-in loader that reports to a ``WebImageObserver``, so that ``WebImageManager/observer``
/// can reach it through the `any ImageLoader` it holds.
protocol ObservableLoader {
    /// Sets the loader's observer (and its inner loaders').
    func setObserver(_ observer: (any WebImageObserver)?)
}
