//! What a person sees: the chip of a PR, its status line, the status page and its colours,
//! times as a person reads them, and the forge's web links. Pure functions of stored state and
//! the run's clock; the commands and the tick print or write what these return.

pub mod branch_view;
pub mod chip;
pub mod columns;
pub mod html;
pub mod palette;
pub mod status_page;
pub mod status_view;
pub mod web;
pub mod when;
