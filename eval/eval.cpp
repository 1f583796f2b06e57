namespace candor::eval {}
