# Render an R Markdown vignette to Markdown with knitr alone (no pandoc, no rmarkdown).
#
#   Rscript vignettes/render_r.R vignettes/04_dpsubset_from_r.Rmd [out_dir]
#
# knitr::knit runs the chunks and writes <out_dir>/<name>.md with the figures in
# <out_dir>/<name>_files/. The wrapper must be installed where R finds it (R_LIBS)
# and RETICULATE_PYTHON must name a Python with dpsubset (make vignettes sets both).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1L) stop("usage: Rscript vignettes/render_r.R input.Rmd [out_dir]")
input <- normalizePath(args[[1L]], mustWork = TRUE)
out_dir <- if (length(args) >= 2L) args[[2L]] else file.path(dirname(input), "rendered")
dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)
out_dir <- normalizePath(out_dir)
name <- tools::file_path_sans_ext(basename(input))
fig_dir <- file.path(out_dir, paste0(name, "_files"))
unlink(fig_dir, recursive = TRUE)
old <- setwd(out_dir)
on.exit(setwd(old))
knitr::opts_chunk$set(fig.path = paste0(name, "_files/"), error = FALSE)
started <- Sys.time()
invisible(knitr::knit(input, output = paste0(name, ".md"), quiet = TRUE, envir = new.env()))
seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
quick <- identical(Sys.getenv("DPSUBSET_VIGNETTE_QUICK"), "1")
cat(sprintf("\n---\n\n*Rendered by `vignettes/render_r.R` (knitr %s) from `vignettes/%s` on %s: %.0f s of wall time, %s.*\n",
            as.character(packageVersion("knitr")), basename(input),
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), seconds,
            if (quick) "quick mode (DPSUBSET_VIGNETTE_QUICK=1)" else "full size"),
    file = paste0(name, ".md"), append = TRUE)
cat(sprintf("wrote %s (%.1f s)\n", file.path(out_dir, paste0(name, ".md")), seconds))
