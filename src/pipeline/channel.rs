//! The frame channel between the capture thread and the segmentation worker, with two
//! explicit delivery policies:
//!
//! - **latest-wins** (live sources): bounded; when full, the sender throws away the
//!   oldest queued item and counts it. Sending never blocks, memory never grows, and
//!   the receiver always gets the newest frames. A slow solver drops frames instead of
//!   stalling the camera.
//! - **lossless** (files): bounded; when full, the sender waits. Every frame is
//!   processed, in order, and memory stays bounded too.
//!
//! Each item carries the number of items dropped before it was sent, so the receiver
//! learns exactly how many were lost between two items it got.

use crossbeam_channel::{Receiver, RecvError, Sender, TryRecvError, TrySendError, bounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What happens when the channel is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Replace the oldest queued item (never blocks the sender).
    LatestWins,
    /// Wait for room (never loses an item).
    Lossless,
}

/// An item in transit with the sender's drop count at the time it was sent.
#[derive(Debug)]
pub struct Stamped<T> {
    value: T,
    dropped_before: u64,
}

/// An item as the receiver gets it.
#[derive(Debug, PartialEq, Eq)]
pub struct Received<T> {
    /// The item.
    pub value: T,
    /// Items dropped since the previous item this receiver got.
    pub dropped: u64,
}

/// The send half; owned by one producer thread.
pub struct FrameSender<T> {
    tx: Sender<Stamped<T>>,
    /// The sender's own handle on the queue, used to evict the oldest item.
    evict: Option<Receiver<Stamped<T>>>,
    dropped: Arc<AtomicU64>,
    receiver_alive: Arc<AtomicBool>,
}

/// The receive half; owned by the consumer. Dropping it tells the sender to stop.
pub struct FrameReceiver<T> {
    rx: Receiver<Stamped<T>>,
    last_stamp: u64,
    alive: Arc<AtomicBool>,
}

/// The item could not be sent: the receiver is gone.
#[derive(Debug, PartialEq, Eq)]
pub struct Closed<T>(pub T);

/// A channel holding at most `capacity` (at least 1) items, with the given policy.
pub fn channel<T>(delivery: Delivery, capacity: usize) -> (FrameSender<T>, FrameReceiver<T>) {
    let (tx, rx) = bounded(capacity.max(1));
    let alive = Arc::new(AtomicBool::new(true));
    let sender = FrameSender {
        tx,
        evict: (delivery == Delivery::LatestWins).then(|| rx.clone()),
        dropped: Arc::new(AtomicU64::new(0)),
        receiver_alive: alive.clone(),
    };
    let receiver = FrameReceiver {
        rx,
        last_stamp: 0,
        alive,
    };
    (sender, receiver)
}

impl<T> FrameSender<T> {
    /// Sends `value`. Latest-wins: never blocks; evicts (and counts) the oldest queued
    /// item when full. Lossless: blocks while full. Fails once the receiver is dropped.
    pub fn send(&self, value: T) -> Result<(), Closed<T>> {
        if self.is_closed() {
            return Err(Closed(value));
        }
        let mut item = Stamped {
            value,
            dropped_before: self.dropped.load(Ordering::Relaxed),
        };
        let Some(evict) = &self.evict else {
            return self.tx.send(item).map_err(|e| Closed(e.0.value));
        };
        loop {
            match self.tx.try_send(item) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(back)) => return Err(Closed(back.value)),
                Err(TrySendError::Full(back)) => {
                    item = back;
                    // The consumer may have taken the oldest in the meantime: then
                    // there is room and nothing is dropped.
                    if evict.try_recv().is_ok() {
                        item.dropped_before = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    }
                }
            }
        }
    }

    /// Items evicted so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Whether the receiver has been dropped (the producer should stop).
    pub fn is_closed(&self) -> bool {
        !self.receiver_alive.load(Ordering::Acquire)
    }

    /// Items queued now.
    pub fn len(&self) -> usize {
        self.tx.len()
    }

    /// Whether nothing is queued now.
    pub fn is_empty(&self) -> bool {
        self.tx.is_empty()
    }
}

impl<T> FrameReceiver<T> {
    /// Waits for the next item; `Err` once the sender is gone and the queue is empty.
    pub fn recv(&mut self) -> Result<Received<T>, RecvError> {
        let item = self.rx.recv()?;
        Ok(self.accept(item))
    }

    /// The next item if one is queued.
    pub fn try_recv(&mut self) -> Result<Received<T>, TryRecvError> {
        let item = self.rx.try_recv()?;
        Ok(self.accept(item))
    }

    /// The underlying receiver, to wait on it in a `select!` together with other
    /// channels; pass what it yields to [`FrameReceiver::accept`].
    pub fn raw(&self) -> &Receiver<Stamped<T>> {
        &self.rx
    }

    /// Unwraps an item taken from [`FrameReceiver::raw`], counting the drops before it.
    pub fn accept(&mut self, item: Stamped<T>) -> Received<T> {
        let dropped = item.dropped_before.saturating_sub(self.last_stamp);
        self.last_stamp = self.last_stamp.max(item.dropped_before);
        Received {
            value: item.value,
            dropped,
        }
    }
}

impl<T> Drop for FrameReceiver<T> {
    fn drop(&mut self) {
        self.alive.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn latest_wins_keeps_the_newest_and_counts_the_rest() {
        let (tx, mut rx) = channel(Delivery::LatestWins, 2);
        for i in 0..1000 {
            tx.send(i).unwrap(); // would block forever if it could block
            assert!(tx.len() <= 2, "bounded");
        }
        assert_eq!(tx.dropped(), 998);
        let a = rx.recv().unwrap();
        let b = rx.recv().unwrap();
        assert_eq!((a.value, b.value), (998, 999));
        assert_eq!(a.dropped + b.dropped, 998);
        tx.send(1000).unwrap();
        assert_eq!(
            rx.recv().unwrap(),
            Received {
                value: 1000,
                dropped: 0
            }
        );
    }

    #[test]
    fn drops_are_attributed_to_the_item_that_replaced_them() {
        let (tx, mut rx) = channel(Delivery::LatestWins, 1);
        tx.send('a').unwrap();
        assert_eq!(
            rx.recv().unwrap(),
            Received {
                value: 'a',
                dropped: 0
            }
        );
        tx.send('b').unwrap();
        tx.send('c').unwrap();
        tx.send('d').unwrap();
        assert_eq!(
            rx.recv().unwrap(),
            Received {
                value: 'd',
                dropped: 2
            }
        );
        tx.send('e').unwrap();
        assert_eq!(
            rx.recv().unwrap(),
            Received {
                value: 'e',
                dropped: 0
            }
        );
    }

    #[test]
    fn lossless_delivers_everything_in_order_with_backpressure() {
        let (tx, mut rx) = channel(Delivery::Lossless, 2);
        let producer = std::thread::spawn(move || {
            for i in 0..500u32 {
                tx.send(i).unwrap();
                assert!(tx.len() <= 2);
            }
            tx.dropped()
        });
        let mut got = Vec::new();
        while let Ok(r) = rx.recv() {
            assert_eq!(r.dropped, 0);
            got.push(r.value);
            if got.len() % 50 == 0 {
                std::thread::sleep(Duration::from_millis(1)); // a slow consumer
            }
        }
        assert_eq!(producer.join().unwrap(), 0);
        assert_eq!(got, (0..500).collect::<Vec<_>>());
    }

    #[test]
    fn a_fast_producer_never_waits_for_a_slow_consumer() {
        let (tx, mut rx) = channel(Delivery::LatestWins, 1);
        let producer = std::thread::spawn(move || {
            for i in 0..20_000u32 {
                tx.send(i).unwrap();
            }
            tx.dropped()
        });
        let mut got = Vec::new();
        let mut dropped = 0;
        while let Ok(r) = rx.recv() {
            dropped += r.dropped;
            got.push(r.value);
            std::thread::sleep(Duration::from_micros(200));
        }
        let sender_dropped = producer.join().unwrap();
        assert_eq!(
            *got.last().unwrap(),
            19_999,
            "the newest item always arrives"
        );
        assert!(got.windows(2).all(|w| w[0] < w[1]), "in order");
        assert_eq!(
            got.len() as u64 + sender_dropped,
            20_000,
            "every item received or counted"
        );
        assert_eq!(dropped, sender_dropped, "the receiver learns every drop");
    }

    #[test]
    fn dropping_the_receiver_closes_both_policies() {
        for delivery in [Delivery::LatestWins, Delivery::Lossless] {
            let (tx, rx) = channel(delivery, 1);
            tx.send(1).unwrap();
            drop(rx);
            assert!(tx.is_closed());
            assert_eq!(tx.send(2), Err(Closed(2)));
        }
    }

    #[test]
    fn a_blocked_lossless_sender_wakes_when_the_receiver_goes() {
        let (tx, rx) = channel(Delivery::Lossless, 1);
        tx.send(0).unwrap();
        let producer = std::thread::spawn(move || tx.send(1));
        std::thread::sleep(Duration::from_millis(20));
        drop(rx);
        assert_eq!(producer.join().unwrap(), Err(Closed(1)));
    }
}
